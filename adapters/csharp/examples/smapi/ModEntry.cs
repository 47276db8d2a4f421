// A minimal SMAPI mod (Stardew Valley) with the XiaoTangYuan client: connect when a save loads,
// drain the client's events on every tick, update the state once a second, close at the title.
// SMAPI runs UpdateTicked on the game's main thread, so every callback below may touch the game.
// Three actions XiaoTangYuan may take (v1.md "Actions"): highlight and set_waypoint (look),
// walk_to (act); each checks its preconditions against the game itself and refuses with why.
// Game events (v1.md "game.event") from the same 60 Hz loop: stamina low, a festival or a
// villager's birthday tomorrow, and the day's end; XiaoTangYuan may speak up about them, within
// the budget the player set on the page (off by default), and says why it spoke.
// Push-to-talk (v1.md "Voice"): hold V to speak; the server listens to the PC's microphone,
// the mod shows what was heard and the reply, which the server also reads aloud.
// The chat box: Y opens it, Enter asks, Escape closes it. While it is open the draft goes to
// client.ChatTyping every tick; the client hints it (v1.md "chat.typing") when the player
// pauses, so the server has the question's memory search under way before Enter.
using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using Microsoft.Xna.Framework;
using StardewModdingAPI;
using StardewModdingAPI.Events;
using StardewValley;
using StardewValley.Menus;
using StardewValley.Pathfinding;
using XiaoTangYuan.Adapter;

namespace XiaoTangYuan.Stardew
{
    public sealed class ModEntry : Mod
    {
        private const string Game = "stardew-valley";
        private XtyClient client;
        private ModFolder folder;
        private string reply = "";
        private volatile string problem;   // set by a background task, logged on the main thread
        private string waypoint;           // drawn on the map by the mod (RenderedHud in a real mod)
        private readonly EventEdges edges = new EventEdges();   // one report when a condition turns true
        private int checkedDay = -1;       // the day whose "tomorrow" was looked at
        private string talking;            // the utterance while the talk key is held
        private const SButton TalkKey = SButton.V;
        private TextBox chatBox;           // the chat box while it is open
        private const SButton ChatKey = SButton.Y;

        // The places walk_to and set_waypoint know: the location they are in and a tile there.
        private static readonly Dictionary<string, KeyValuePair<string, Point>> Places = new Dictionary<string, KeyValuePair<string, Point>>
        {
            { "鱼塘", new KeyValuePair<string, Point>("Farm", new Point(35, 20)) },
            { "农舍", new KeyValuePair<string, Point>("Farm", new Point(64, 15)) },
            { "矿洞", new KeyValuePair<string, Point>("Mountain", new Point(54, 5)) },
            { "小镇广场", new KeyValuePair<string, Point>("Town", new Point(52, 68)) },
        };
        private static readonly Dictionary<string, string> LocationNames = new Dictionary<string, string>
        {
            { "Farm", "农场" }, { "Mountain", "山区" }, { "Town", "鹈鹕镇" }, { "Mine", "矿井" },
        };

        /// <summary>One kept value as SMAPI's global data stores it (a JSON file per key).</summary>
        public sealed class Kept { public string Value; }

        public override void Entry(IModHelper helper)
        {
            // The salt and the key live in SMAPI's global data (the game's app data folder), which
            // a mod update does not replace; an older version's files in this folder move there.
            var keep = new DelegateStore(
                name => { var kept = helper.Data.ReadGlobalData<Kept>(name); return kept == null ? null : kept.Value; },
                (name, text) => helper.Data.WriteGlobalData(name, text == null ? null : new Kept { Value = text }));
            folder = new ModFolder(helper.DirectoryPath, keep);
            foreach (var name in folder.Moved) Monitor.Log("moved " + name + " out of the mod's folder into SMAPI's global data", LogLevel.Info);
            helper.Events.GameLoop.SaveLoaded += OnSaveLoaded;
            helper.Events.GameLoop.UpdateTicked += OnUpdateTicked;
            helper.Events.GameLoop.ReturnedToTitle += OnReturnedToTitle;
            helper.Events.GameLoop.DayEnding += OnDayEnding;
            helper.Events.Input.ButtonPressed += OnButtonPressed;
            helper.Events.Input.ButtonReleased += OnButtonReleased;
        }

        private void OnSaveLoaded(object sender, SaveLoadedEventArgs e)
        {
            var features = new Dictionary<string, string> {
                { "farm", Game1.player.farmName.Value }, { "id", Game1.uniqueIDForThisGame.ToString() } };
            string saveId = SaveId.Derive(features, folder.Salt());
            Monitor.Log("saveId " + saveId, LogLevel.Trace);   // opaque: nothing of the save can be read back
            var identity = new JsonObject().Add("gameId", Game)
                .Add("saveId", saveId).Add("saveName", Game1.player.farmName.Value);
            client = new XtyClient(folder.Url(), folder.Key(), identity, "XTY Stardew", "0.1.0", null);
            client.OnDelta = (id, text) => { reply += text; ShowBubble(reply); };
            client.OnChatEnd = r => { if (!r.Done) ShowBubble("小汤圆没有回答（" + r.Code + "）/ no answer (" + r.Code + ")"); };
            client.OnError = frame => Monitor.Log("refused: " + frame.Str("code") + " " + frame.Str("message"), LogLevel.Warn);
            client.OnLog = line => Monitor.Log(line, LogLevel.Debug);
            // No key yet: the client pairs; the player allows the code on the memory page once.
            client.OnPairCode = (code, seconds) => ShowBubble("在小汤圆页面上确认配对码 " + code + " / Confirm code " + code + " on the XiaoTangYuan page");
            client.OnPaired = key => folder.SaveKey(key);   // folder.Key() returns it from the next start on
            client.KeySource = folder.Key;   // another copy of the mod may have paired: its key, no second pairing
            client.InstallId = folder.InstallId();   // a key per install: another account's install keeps its own
            client.OnKeyRefused = refused => folder.ForgetKey(refused);   // revoked on the page: pair again next time
            // What the server heard while the talk key is held, then all of it; a voice problem
            // (no microphone, only silence...) comes with a message for the player.
            client.OnTranscript = (id, text, final) => Monitor.Log((final ? "heard: " : "hearing: ") + text, LogLevel.Info);
            client.OnVoiceError = (id, code, message) => ShowBubble(message);
            AddActions(client);
            // XiaoTangYuan speaking up by itself: the whole line, then why it spoke (smaller, under it).
            client.OnCompanion = (id, text, finished, why) =>
            {
                if (!finished || text == "") return;
                ShowBubble(text);
                if (why != null) Monitor.Log("(" + why + ")", LogLevel.Info);
            };
            client.OnActionRun = (name, args, outcome) => Monitor.Log("action " + name + ": " + outcome.Status + " " + outcome.Text, LogLevel.Info);
            // Never wait on the main thread: Start() connects in the background, and keeps trying
            // when the game was started before the server.
            client.Start();
        }

        private void OnUpdateTicked(object sender, UpdateTickedEventArgs e)
        {
            if (client == null) return;
            if (chatBox != null) client.ChatTyping(chatBox.Text);   // the same text again is no change
            client.Poll();   // OnDelta, OnChatEnd, OnError, OnLog run here, on the main thread
            var p = problem;
            if (p != null) { problem = null; Monitor.Log(p, LogLevel.Warn); }
            if (e.Ticks % 60 == 0 && client.ServerHello != null) Watch(client.UpdateStateAsync(Projection.Project(Observe(), "", Game)));
            if (e.Ticks % 60 == 30 && client.ServerHello != null) WatchEvents();
        }

        // -- game events (v1.md "game.event"): checked once a second, each reported once when it
        // starts; the server decides whether XiaoTangYuan says anything ------------------------------

        private void WatchEvents()
        {
            var p = Game1.player;
            if (edges.Rose("stamina_low", p.Stamina < p.MaxStamina * 0.15f))
                Report("stamina_low", new JsonObject().Add("value", Math.Round((double)p.Stamina, 1)).Add("maxValue", p.MaxStamina));
            if (Game1.dayOfMonth == checkedDay) return;
            checkedDay = Game1.dayOfMonth;
            int tomorrow = Game1.dayOfMonth + 1;   // 29: the next season's first day, not looked at here
            if (tomorrow <= 28 && Utility.isFestivalDay(tomorrow, Game1.season))
                Report("festival_tomorrow", new JsonObject().Add("place", "鹈鹕镇"));
            foreach (var npc in Utility.getAllVillagers())
            {
                if (npc.Birthday_Season != Game1.currentSeason || npc.Birthday_Day != tomorrow) continue;
                Report("birthday_tomorrow", new JsonObject().Add("subject", npc.displayName));
                break;
            }
        }

        private void OnDayEnding(object sender, DayEndingEventArgs e)
        {
            if (client != null && client.ServerHello != null) Report("day_ended", new JsonObject().Add("count", Game1.dayOfMonth));
        }

        private void Report(string kind, JsonObject facts)
        {
            Monitor.Log("event " + kind, LogLevel.Debug);
            Watch(client.ReportEventAsync(kind, facts));
        }

        /// <summary>One player turn (from the mod's chat box or voice hook).</summary>
        public void Ask(string question, string source = "text")
        {
            if (client == null) return;
            reply = "";
            Watch(client.ChatAsync(question, null, null, Projection.Project(Observe(), question, Game), source));
        }

        // Push-to-talk: VoiceStart and VoiceStop return at once, so the game never waits.
        private void OnButtonPressed(object sender, ButtonPressedEventArgs e)
        {
            if (client == null) return;
            if (chatBox != null)
            {
                // The keys are the box's while it is open (a V typed is a letter, not the talk key).
                if (e.Button == SButton.Escape) CloseChat();
                return;
            }
            if (e.Button == ChatKey && talking == null) { OpenChat(); return; }
            if (e.Button != TalkKey || client.ServerHello == null || talking != null) return;
            reply = "";
            talking = client.VoiceStart();
        }

        // The game's own text box: the keyboard dispatcher types into it while it is selected
        // (a real mod draws it in RenderedHud: chatBox.Draw(e.SpriteBatch)).
        private void OpenChat()
        {
            chatBox = new TextBox(null, null, Game1.smallFont, Game1.textColor) { X = 64, Y = 64, Width = 800 };
            chatBox.OnEnterPressed += box =>
            {
                string question = box.Text;
                CloseChat();
                if (question.Trim() != "") Ask(question);
            };
            chatBox.Selected = true;
        }

        private void CloseChat()
        {
            chatBox.Selected = false;
            chatBox = null;
            client.ChatTyping("");   // nothing typed any more: no hint
        }

        private void OnButtonReleased(object sender, ButtonReleasedEventArgs e)
        {
            if (e.Button != TalkKey || talking == null) return;
            Watch(client.VoiceStop(talking));
            talking = null;
        }

        private void OnReturnedToTitle(object sender, ReturnedToTitleEventArgs e)
        {
            talking = null;
            if (chatBox != null) chatBox.Selected = false;
            chatBox = null;
            var c = client;
            client = null;
            if (c != null) c.CloseAsync().ContinueWith(_ => c.Dispose());
        }

        // -- actions (v1.md "Actions"): each runs on the main thread from client.Poll() ---------------

        private void AddActions(XtyClient c)
        {
            var places = new List<string>(Places.Keys).ToArray();
            c.AddAction(new XtyAction
            {
                Name = "highlight", Risk = "look",
                Description = "在屏幕上指出附近的一个人物", DescriptionEn = "point out a character nearby",
                Parameters = new JsonObject()
                    .Add("properties", new JsonObject().Add("name", new JsonObject().Add("type", "string").Add("maxLength", 40)))
                    .Add("required", new List<object> { "name" }),
                Run = (args, confirmed) => Highlight(args.Str("name")),
            });
            c.AddAction(new XtyAction
            {
                Name = "set_waypoint", Risk = "look",
                Description = "在地图上标记一个地点", DescriptionEn = "mark a place on the map",
                Parameters = new JsonObject()
                    .Add("properties", new JsonObject().Add("place", XtyAction.Choice("地点", places)))
                    .Add("required", new List<object> { "place" }),
                Run = (args, confirmed) => SetWaypoint(args.Str("place")),
            });
            c.AddAction(new XtyAction
            {
                Name = "walk_to", Risk = "act", CooldownMs = 3000,
                Description = "带玩家走到当前地图上的一个地点", DescriptionEn = "walk the player to a place on this map",
                Parameters = new JsonObject()
                    .Add("properties", new JsonObject().Add("place", XtyAction.Choice("地点", places)))
                    .Add("required", new List<object> { "place" }),
                Run = (args, confirmed) => WalkTo(args.Str("place")),
            });
        }

        /// <summary>Why nothing may be done now (a menu, a cutscene, the player cannot move), or null.</summary>
        private static string Busy()
        {
            if (Game1.eventUp) return "正在播放剧情，等剧情结束再说 / a cutscene is playing";
            if (Game1.activeClickableMenu != null) return "菜单开着，先关掉菜单 / a menu is open";
            if (!Game1.player.CanMove) return "玩家现在不能移动 / the player cannot move now";
            return null;
        }

        private static ActionOutcome Highlight(string name)
        {
            string busy = Busy();
            if (busy != null) return ActionOutcome.Refused(busy);
            foreach (var npc in Game1.currentLocation.characters)
            {
                if (npc.Name == name || npc.displayName == name)
                {
                    Game1.addHUDMessage(new HUDMessage("小汤圆：看这里 → " + npc.displayName, 2));
                    return ActionOutcome.Done("已经指出了" + npc.displayName);
                }
            }
            return ActionOutcome.Refused("附近没有" + name + " / nobody called " + name + " is here");
        }

        private ActionOutcome SetWaypoint(string place)
        {
            KeyValuePair<string, Point> at;
            if (place == null || !Places.TryGetValue(place, out at)) return ActionOutcome.Refused("不认识这个地点 / unknown place");
            waypoint = place;
            Monitor.Log("waypoint: " + waypoint, LogLevel.Info);
            return ActionOutcome.Done("已在地图上标出" + place + "（" + Shown(at.Key) + "）");
        }

        private ActionOutcome WalkTo(string place)
        {
            KeyValuePair<string, Point> at;
            if (place == null || !Places.TryGetValue(place, out at)) return ActionOutcome.Refused("不认识这个地点 / unknown place");
            string busy = Busy();
            if (busy != null) return ActionOutcome.Refused(busy);
            string here = Game1.currentLocation.Name;
            if (at.Key != here)
                return ActionOutcome.Refused(place + "在" + Shown(at.Key) + "，玩家在" + Shown(here) + "：只能在当前地图上带路");
            var path = new PathFindController(Game1.player, Game1.currentLocation, at.Value, 2);
            if (path.pathToEndPoint == null) return ActionOutcome.Refused("走不到" + place + "：路被挡住了 / no path to " + place);
            Game1.player.controller = path;
            Monitor.Log("walking to " + place + " (" + at.Value.X + "," + at.Value.Y + "), " + path.pathToEndPoint.Count + " tiles", LogLevel.Info);
            return ActionOutcome.Done("开始走向" + place + "，大约 " + path.pathToEndPoint.Count + " 格");
        }

        private static string Shown(string location)
        {
            string name;
            return LocationNames.TryGetValue(location, out name) ? name : location;
        }

        private static JsonObject Observe()
        {
            var p = Game1.player;
            var held = p.CurrentItem;
            return new JsonObject()
                .Add("world", new JsonObject().Add("location", Game1.currentLocation.Name).Add("season", Game1.currentSeason)
                    .Add("day", Game1.dayOfMonth).Add("time", (Game1.timeOfDay / 100).ToString("00") + ":" + (Game1.timeOfDay % 100).ToString("00")))
                // The held item by its id and as the game shows it in the player's language.
                .Add("player", new JsonObject().Add("health", p.health).Add("stamina", p.Stamina)
                    .Add("heldItem", held == null ? null : held.QualifiedItemId)
                    .Add("heldItemName", held == null ? null : held.DisplayName))
                .Add("ui", new JsonObject().Add("busy", false));
        }

        private void ShowBubble(string text) { Monitor.Log("XiaoTangYuan: " + text, LogLevel.Info); }

        private void Watch(Task task)
        {
            task.ContinueWith(t => problem = t.Exception.GetBaseException().Message, TaskContinuationOptions.OnlyOnFaulted);
        }
    }
}
