// Stand-ins of exactly the SMAPI and Stardew Valley API surface examples/smapi/ModEntry.cs uses,
// so CI compiles the example without the game (its DLLs cannot be fetched here). Shapes follow
// SMAPI's public API (Mod.Entry(IModHelper), helper.Events.GameLoop.*) and Stardew's Game1;
// the bodies are not the game's. A real build references StardewModdingAPI.dll and Stardew
// Valley.dll (Pathoschild.Stardew.ModBuildConfig) instead of this file.
using System;

namespace StardewModdingAPI
{
    public enum LogLevel { Trace, Debug, Info, Warn, Error, Alert }

    public interface IMonitor { void Log(string message, LogLevel level = LogLevel.Trace); }

    public interface IModHelper
    {
        string DirectoryPath { get; }
        Events.IModEvents Events { get; }
        IDataHelper Data { get; }
    }

    /// <summary>SMAPI's helper.Data: global data is kept in the game's app data folder
    /// (.smapi/mod-data/&lt;mod id&gt;/&lt;key&gt;.json), which a mod update does not touch; a null
    /// value deletes it. Keys are letters, digits, '_', '.', '-'.</summary>
    public interface IDataHelper
    {
        TModel ReadGlobalData<TModel>(string key) where TModel : class;
        void WriteGlobalData<TModel>(string key, TModel data) where TModel : class;
    }

    public abstract class Mod
    {
        public IModHelper Helper { get; internal set; }
        public IMonitor Monitor { get; internal set; }
        public abstract void Entry(IModHelper helper);
    }
}

namespace StardewModdingAPI.Events
{
    public interface IModEvents { IGameLoopEvents GameLoop { get; } }

    public interface IGameLoopEvents
    {
        event EventHandler<SaveLoadedEventArgs> SaveLoaded;
        event EventHandler<UpdateTickedEventArgs> UpdateTicked;
        event EventHandler<ReturnedToTitleEventArgs> ReturnedToTitle;
    }

    public class SaveLoadedEventArgs : EventArgs { }
    public class ReturnedToTitleEventArgs : EventArgs { }
    public class UpdateTickedEventArgs : EventArgs { public uint Ticks { get; set; } }
}

namespace Netcode
{
    public class NetString { public string Value { get; set; } }
}

namespace StardewValley
{
    public class GameLocation { public string Name { get; set; } }

    public class Item
    {
        public string QualifiedItemId { get; set; }
        public string DisplayName { get; set; }
    }

    public class Farmer
    {
        public string Name { get; set; }
        public int health;
        public float Stamina { get; set; }
        public Item CurrentItem { get; set; }
        public readonly Netcode.NetString farmName = new Netcode.NetString();
    }

    public static class Game1
    {
        public static Farmer player;
        public static ulong uniqueIDForThisGame;
        public static GameLocation currentLocation;
        public static int timeOfDay;
        public static int dayOfMonth;
        public static string currentSeason;
    }
}
