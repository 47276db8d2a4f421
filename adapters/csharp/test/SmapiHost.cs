// The game's side of examples/smapi in tests: SMAPI's mod loading in miniature, over the
// stand-ins (examples/standins/Smapi.cs, compiled into this host). It loads the mod DLL, calls
// Entry, raises SaveLoaded, ticks UpdateTicked 60 times a second on its one main thread, asks
// one question once the mod logged its connection, and returns to the title once the reply ended.
//   mono SmapiHost.exe XtyStardew.dll MOD_FOLDER "question" DATA_FOLDER [farm|walled]
// (DATA_FOLDER: the game's app data folder, where SMAPI keeps global mod data: %AppData%\StardewValley)
// farm: the player stands on the farm, the pond in reach; walled: the pond is walled in. The
// host then prints where the player's path finder leads (the walk_to action's effect).
// evening: no question; the player is tired (stamina 20 of 270) on summer 10, the Luau tomorrow;
// once the mod reported that, the day ends (DayEnding) and the next is summer 12, Alex's birthday
// tomorrow. The host leaves once the mod reported all four events (evening-on: and once
// XiaoTangYuan spoke up about one, with why).
// voice: no question; the player presses and releases the talk key (V) when this host reads
// "press" and "release" on its standard input, each raised on the main thread at the next tick;
// it returns to the title after the reply once it reads "leave" (the reply is heard out).
// typing: no question; the player types into the mod's chat box through the game's keyboard
// dispatcher, from lines on standard input: "open" (the chat key Y), "type TEXT" (a character a
// tick; "typed" is printed after the last), "enter", "escape"; "leave" returns to the title.
using System;
using System.IO;
using System.Linq;
using System.Collections.Concurrent;
using System.Reflection;
using System.Threading;
using StardewModdingAPI;
using StardewModdingAPI.Events;
using StardewValley;

namespace StardewModdingAPI
{
    public sealed class HostMonitor : IMonitor
    {
        public static int MainThread;
        public volatile string Last = "";
        public void Log(string message, LogLevel level = LogLevel.Trace)
        {
            if (Thread.CurrentThread.ManagedThreadId != MainThread) Console.WriteLine("OFF THE MAIN THREAD: " + message);
            Console.WriteLine("[" + level + "] " + message);
            Console.Out.Flush();
            Last = message;
            Lines.Add(message);
        }
        public readonly System.Collections.Generic.List<string> Lines = new System.Collections.Generic.List<string>();
        public bool Saw(string start) { return Lines.Exists(l => l.StartsWith(start, StringComparison.Ordinal)); }
    }

    public sealed class HostLoop : Events.IGameLoopEvents
    {
        public event EventHandler<SaveLoadedEventArgs> SaveLoaded;
        public event EventHandler<UpdateTickedEventArgs> UpdateTicked;
        public event EventHandler<ReturnedToTitleEventArgs> ReturnedToTitle;
        public event EventHandler<DayEndingEventArgs> DayEnding;
        public void EndDay() { DayEnding(this, new DayEndingEventArgs()); }
        public void Loaded() { SaveLoaded(this, new SaveLoadedEventArgs()); }
        public void Tick(uint n) { UpdateTicked(this, new UpdateTickedEventArgs { Ticks = n }); }
        public void Title() { ReturnedToTitle(this, new ReturnedToTitleEventArgs()); }
    }

    /// <summary>SMAPI's global data in miniature: one JSON file per key of the public string fields
    /// (SMAPI writes the whole model with Json.NET), under DATA/.smapi/mod-data/MOD_ID/.</summary>
    public sealed class HostData : IDataHelper
    {
        public string Folder;

        private string PathOf(string key) { return Path.Combine(Folder, key.ToLowerInvariant() + ".json"); }

        public TModel ReadGlobalData<TModel>(string key) where TModel : class
        {
            string file = PathOf(key);
            if (!File.Exists(file)) return null;
            string text = File.ReadAllText(file);
            var model = Activator.CreateInstance<TModel>();
            foreach (var field in typeof(TModel).GetFields())
            {
                string marker = "\"" + field.Name + "\":\"";
                int at = text.IndexOf(marker, StringComparison.Ordinal);
                if (at < 0) continue;
                int start = at + marker.Length;
                field.SetValue(model, text.Substring(start, text.IndexOf('"', start) - start));
            }
            return model;
        }

        public void WriteGlobalData<TModel>(string key, TModel data) where TModel : class
        {
            if (data == null) { File.Delete(PathOf(key)); return; }
            Directory.CreateDirectory(Folder);
            var fields = typeof(TModel).GetFields().Select(f => "\"" + f.Name + "\":\"" + f.GetValue(data) + "\"");
            File.WriteAllText(PathOf(key), "{" + string.Join(",", fields) + "}");
        }
    }

    public sealed class HostInput : Events.IInputEvents
    {
        public event EventHandler<ButtonPressedEventArgs> ButtonPressed;
        public event EventHandler<ButtonReleasedEventArgs> ButtonReleased;
        public void Press(SButton b) { ButtonPressed(this, new ButtonPressedEventArgs { Button = b }); }
        public void Release(SButton b) { ButtonReleased(this, new ButtonReleasedEventArgs { Button = b }); }
    }

    public sealed class HostHelper : IModHelper, Events.IModEvents
    {
        public readonly HostLoop Loop = new HostLoop();
        public readonly HostInput Keys = new HostInput();
        public Events.IInputEvents Input { get { return Keys; } }
        public readonly HostData DataFolder = new HostData();
        public IDataHelper Data { get { return DataFolder; } }
        public string DirectoryPath { get; set; }
        public Events.IModEvents Events { get { return this; } }
        public Events.IGameLoopEvents GameLoop { get { return Loop; } }
    }

    public static class SmapiHost
    {
        public static int Main(string[] args)
        {
            HostMonitor.MainThread = Thread.CurrentThread.ManagedThreadId;
            Game1.player = new Farmer { Name = "Pip", health = 100, Stamina = 72.3f,
                CurrentItem = new Item { QualifiedItemId = "(O)128", DisplayName = "河豚" } };
            Game1.player.farmName.Value = "Sunny Farm";
            Game1.uniqueIDForThisGame = 18000000000000000001UL;
            Game1.currentLocation = new GameLocation { Name = "Mine" };
            string scenario = args.Length > 4 ? args[4] : "";
            if (scenario == "farm" || scenario == "walled")
            {
                Game1.currentLocation = new GameLocation { Name = "Farm" };
                Game1.player.TilePoint = new Microsoft.Xna.Framework.Point(30, 20);
                Game1.currentLocation.characters.Add(new NPC { Name = "Robin", displayName = "罗宾" });
                if (scenario == "walled")
                    foreach (var d in new[] { new[] { 1, 0 }, new[] { -1, 0 }, new[] { 0, 1 }, new[] { 0, -1 } })
                        Game1.currentLocation.Block(35 + d[0], 20 + d[1]);
            }
            Game1.timeOfDay = 1330;
            Game1.dayOfMonth = 12;
            Game1.currentSeason = "summer";
            Game1.season = Season.Summer;
            Game1.player.MaxStamina = 270;
            bool evening = scenario.StartsWith("evening", StringComparison.Ordinal);
            if (evening)
            {
                Utility.Villagers.Add(new NPC { Name = "Alex", displayName = "亚历克斯", Birthday_Season = "summer", Birthday_Day = 13 });
                Utility.Villagers.Add(new NPC { Name = "Maru", displayName = "玛鲁", Birthday_Season = "summer", Birthday_Day = 10 });
                Game1.timeOfDay = 1810;
                Game1.dayOfMonth = 10;
                Game1.player.Stamina = 20f;
            }

            var type = Assembly.LoadFrom(args[0]).GetTypes().Single(t => typeof(Mod).IsAssignableFrom(t));
            var mod = (Mod)Activator.CreateInstance(type);
            var helper = new HostHelper { DirectoryPath = args[1] };
            helper.DataFolder.Folder = Path.Combine(args[3], ".smapi", "mod-data", "xiaotangyuan.stardew");
            var monitor = new HostMonitor();
            mod.Helper = helper;
            mod.Monitor = monitor;
            mod.Entry(helper);
            helper.Loop.Loaded();
            bool voice = scenario == "voice", typing = scenario == "typing";
            var typed = new ConcurrentQueue<string>();
            var keys = new System.Collections.Generic.Queue<char>();   // the chat box's, a character a tick
            if (voice || typing)
            {
                var reader = new Thread(() => { string line; while ((line = Console.In.ReadLine()) != null) typed.Enqueue(line.Trim()); });
                reader.IsBackground = true;
                reader.Start();
            }
            bool asked = false, left = false, leave = !voice && !typing;
            var deadline = DateTime.UtcNow.AddSeconds(voice || typing ? 120 : 60);
            for (uint tick = 1; DateTime.UtcNow < deadline; tick++)
            {
                helper.Loop.Tick(tick);
                string key;
                while (typed.TryDequeue(out key))
                {
                    if (key == "press") helper.Keys.Press(SButton.V);
                    if (key == "release") helper.Keys.Release(SButton.V);
                    if (key == "leave") leave = true;
                    if (key == "open") helper.Keys.Press(SButton.Y);
                    if (key == "escape") helper.Keys.Press(SButton.Escape);
                    if (key.StartsWith("type ", StringComparison.Ordinal)) foreach (char c in key.Substring(5)) keys.Enqueue(c);
                    if (key == "enter") keys.Enqueue('\r');
                }
                if (keys.Count > 0)
                {
                    char c = keys.Dequeue();
                    var box = Game1.keyboardDispatcher.Subscriber;
                    if (box != null && c == '\r') box.RecieveCommandInput(c);
                    else if (box != null) box.RecieveTextInput(c);
                    if (keys.Count == 0 && c != '\r') { Console.WriteLine("typed"); Console.Out.Flush(); }
                }
                if (typing)
                {
                    if (leave && !left)
                    {
                        left = true;
                        helper.Loop.Title();
                        deadline = DateTime.UtcNow.AddSeconds(2);
                    }
                    Thread.Sleep(16);
                    continue;
                }
                if (!asked && monitor.Saw("connected, session"))
                {
                    asked = true;
                    if (args[2] != "") type.GetMethod("Ask").Invoke(mod, new object[] { args[2], "text" });
                }
                if (evening && !left)
                {
                    if (monitor.Saw("event festival_tomorrow") && Game1.dayOfMonth == 10)
                    {
                        helper.Loop.EndDay();
                        Game1.dayOfMonth = 12;
                        Game1.timeOfDay = 600;
                    }
                    bool spoke = scenario != "evening-on" || (monitor.Saw("XiaoTangYuan: ") && monitor.Saw("(小汤圆主动说话"));
                    if (monitor.Saw("event birthday_tomorrow") && spoke)
                    {
                        left = true;
                        deadline = DateTime.UtcNow.AddSeconds(2);   // the frames queued go out first
                    }
                    Thread.Sleep(16);
                    continue;
                }
                if (asked && leave && !left && monitor.Lines.Exists(l => l.StartsWith("XiaoTangYuan: ", StringComparison.Ordinal) && l.EndsWith("！", StringComparison.Ordinal)))
                {
                    left = true;
                    helper.Loop.Title();
                    deadline = DateTime.UtcNow.AddSeconds(2);
                }
                Thread.Sleep(16);
            }
            var walking = Game1.player.controller;
            if (walking != null) Console.WriteLine("PATH TO " + walking.endPoint.X + "," + walking.endPoint.Y);
            foreach (var m in Game1.HudMessages) Console.WriteLine("HUD " + m);
            if (evening && left) helper.Loop.Title();
            Console.WriteLine(left ? "back at the title" : "no reply");
            return left ? 0 : 1;
        }
    }
}
