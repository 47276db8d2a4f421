// Stand-ins of exactly the SMAPI and Stardew Valley API surface examples/smapi/ModEntry.cs uses,
// so CI compiles the example without the game (its DLLs cannot be fetched here). Shapes follow
// SMAPI's public API (Mod.Entry(IModHelper), helper.Events.GameLoop.*) and Stardew's Game1;
// the bodies are not the game's. A real build references StardewModdingAPI.dll and Stardew
// Valley.dll (Pathoschild.Stardew.ModBuildConfig) instead of this file.
using System;
using System.Collections.Generic;

namespace StardewModdingAPI
{
    public enum LogLevel { Trace, Debug, Info, Warn, Error, Alert }

    /// <summary>SMAPI's buttons: a key, a mouse or a controller button (only what the example uses).</summary>
    public enum SButton { None = 0, Escape = 27, V = 86, Y = 89 }

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
    public interface IModEvents { IGameLoopEvents GameLoop { get; } IInputEvents Input { get; } }

    /// <summary>SMAPI's helper.Events.Input: raised on the main thread before the game handles the button.</summary>
    public interface IInputEvents
    {
        event EventHandler<ButtonPressedEventArgs> ButtonPressed;
        event EventHandler<ButtonReleasedEventArgs> ButtonReleased;
    }

    public class ButtonPressedEventArgs : EventArgs { public SButton Button { get; set; } }
    public class ButtonReleasedEventArgs : EventArgs { public SButton Button { get; set; } }

    public interface IGameLoopEvents
    {
        event EventHandler<SaveLoadedEventArgs> SaveLoaded;
        event EventHandler<UpdateTickedEventArgs> UpdateTicked;
        event EventHandler<ReturnedToTitleEventArgs> ReturnedToTitle;
        event EventHandler<DayEndingEventArgs> DayEnding;
    }

    public class SaveLoadedEventArgs : EventArgs { }
    public class ReturnedToTitleEventArgs : EventArgs { }
    public class DayEndingEventArgs : EventArgs { }
    public class UpdateTickedEventArgs : EventArgs { public uint Ticks { get; set; } }
}

namespace Netcode
{
    public class NetString { public string Value { get; set; } }
}

namespace Microsoft.Xna.Framework
{
    public struct Point
    {
        public int X, Y;
        public Point(int x, int y) { X = x; Y = y; }
    }

    public struct Color { }
}

namespace Microsoft.Xna.Framework.Graphics
{
    public class Texture2D { }
    public class SpriteFont { }
}

namespace Microsoft.Xna.Framework.Input
{
    public enum Keys { None = 0, Escape = 27 }
}

namespace StardewValley
{
    using System.Collections.Generic;
    using Microsoft.Xna.Framework;

    public class GameLocation
    {
        public string Name { get; set; }
        public readonly List<NPC> characters = new List<NPC>();
        // Stand-in only (the host's map): tiles nothing can walk on; the real game asks its map.
        public readonly HashSet<long> BlockedTiles = new HashSet<long>();
        public bool IsBlocked(Point p) { return BlockedTiles.Contains(((long)p.X << 32) | (uint)p.Y); }
        public void Block(int x, int y) { BlockedTiles.Add(((long)x << 32) | (uint)y); }
    }

    public class Character
    {
        public string Name { get; set; }
        public Point TilePoint { get; set; }
    }

    public class NPC : Character
    {
        public string displayName;
        public string Birthday_Season;   // "spring" ... "winter"
        public int Birthday_Day;
    }

    public enum Season { Spring, Summer, Fall, Winter }

    public static class Utility
    {
        // Stand-in: the game's festival days (the real one reads Data/Festivals).
        private static readonly int[][] Festivals = { new[] { 13, 24 }, new[] { 11, 28 }, new[] { 16, 27 }, new[] { 8, 25 } };
        public static bool isFestivalDay(int day, Season season) { return Array.IndexOf(Festivals[(int)season], day) >= 0; }
        public static readonly List<NPC> Villagers = new List<NPC>();   // stand-in only: the host's
        public static List<NPC> getAllVillagers() { return new List<NPC>(Villagers); }
    }

    public class HUDMessage
    {
        public readonly string message;
        public HUDMessage(string message, int whatType) { this.message = message; }
    }

    public class Item
    {
        public string QualifiedItemId { get; set; }
        public string DisplayName { get; set; }
    }

    public class Farmer : Character
    {
        public bool CanMove = true;
        public Pathfinding.PathFindController controller;
        public int health;
        public float Stamina { get; set; }
        public int MaxStamina { get; set; }
        public Item CurrentItem { get; set; }
        public readonly Netcode.NetString farmName = new Netcode.NetString();
    }

    /// <summary>What the game's keyboard dispatcher types into: the selected text box. (The game
    /// spells it "Recieve".)</summary>
    public interface IKeyboardSubscriber
    {
        bool Selected { get; set; }
        void RecieveTextInput(char inputChar);
        void RecieveTextInput(string text);
        void RecieveCommandInput(char command);
        void RecieveSpecialInput(Microsoft.Xna.Framework.Input.Keys key);
    }

    public class KeyboardDispatcher
    {
        public IKeyboardSubscriber Subscriber { get; set; }
    }

    public static class Game1
    {
        public static KeyboardDispatcher keyboardDispatcher = new KeyboardDispatcher();
        public static Microsoft.Xna.Framework.Graphics.SpriteFont smallFont = new Microsoft.Xna.Framework.Graphics.SpriteFont();
        public static Microsoft.Xna.Framework.Color textColor;
        public static Farmer player;
        public static object activeClickableMenu;
        public static bool eventUp;
        public static readonly List<string> HudMessages = new List<string>();   // stand-in only
        public static void addHUDMessage(HUDMessage message) { HudMessages.Add(message.message); }
        public static ulong uniqueIDForThisGame;
        public static GameLocation currentLocation;
        public static int timeOfDay;
        public static int dayOfMonth;
        public static string currentSeason;
        public static Season season;
    }
}

namespace StardewValley.Pathfinding
{
    using System.Collections.Generic;
    using Microsoft.Xna.Framework;

    /// <summary>The game's path finder: pathToEndPoint is null when the end point cannot be reached.
    /// (The stand-in searches a 100x100 grid of the location's unblocked tiles.)</summary>
    public class PathFindController
    {
        public Stack<Point> pathToEndPoint;
        public readonly Point endPoint;

        public PathFindController(Character c, GameLocation location, Point endPoint, int finalFacingDirection)
        {
            this.endPoint = endPoint;
            var start = c.TilePoint;
            var seen = new Dictionary<long, long>();
            var queue = new Queue<Point>();
            System.Func<Point, long> key = p => ((long)p.X << 32) | (uint)p.Y;
            seen[key(start)] = -1;
            queue.Enqueue(start);
            while (queue.Count > 0)
            {
                var p = queue.Dequeue();
                if (p.X == endPoint.X && p.Y == endPoint.Y)
                {
                    pathToEndPoint = new Stack<Point>();
                    for (long k = key(p); k != -1; k = seen[k]) pathToEndPoint.Push(new Point((int)(k >> 32), (int)(uint)k));
                    return;
                }
                foreach (var d in new[] { new Point(1, 0), new Point(-1, 0), new Point(0, 1), new Point(0, -1) })
                {
                    var n = new Point(p.X + d.X, p.Y + d.Y);
                    if (n.X < 0 || n.Y < 0 || n.X >= 100 || n.Y >= 100 || location.IsBlocked(n) || seen.ContainsKey(key(n))) continue;
                    seen[key(n)] = key(p);
                    queue.Enqueue(n);
                }
            }
        }
    }
}

namespace StardewValley.Menus
{
    using Microsoft.Xna.Framework;
    using Microsoft.Xna.Framework.Graphics;

    public delegate void TextBoxEvent(TextBox sender);

    /// <summary>The game's one-line text box: while Selected, the keyboard dispatcher types into it;
    /// Enter ('\r') raises OnEnterPressed, '\b' deletes the last character. (The stand-in neither
    /// draws nor limits the width.)</summary>
    public class TextBox : IKeyboardSubscriber
    {
        public event TextBoxEvent OnEnterPressed;
        public int X { get; set; }
        public int Y { get; set; }
        public int Width { get; set; }
        public string Text { get; set; }
        private bool selected;

        public TextBox(Texture2D textBoxTexture, Texture2D caretTexture, SpriteFont font, Color textColor) { Text = ""; }

        public bool Selected
        {
            get { return selected; }
            set
            {
                selected = value;
                if (value) Game1.keyboardDispatcher.Subscriber = this;
                else if (Game1.keyboardDispatcher.Subscriber == this) Game1.keyboardDispatcher.Subscriber = null;
            }
        }

        public void RecieveTextInput(char inputChar) { Text += inputChar; }
        public void RecieveTextInput(string text) { Text += text; }
        public void RecieveCommandInput(char command)
        {
            if (command == '\b' && Text.Length > 0) Text = Text.Substring(0, Text.Length - 1);
            if (command == '\r' && OnEnterPressed != null) OnEnterPressed(this);
        }
        public void RecieveSpecialInput(Microsoft.Xna.Framework.Input.Keys key) { }
    }
}
