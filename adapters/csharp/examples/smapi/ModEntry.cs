// A minimal SMAPI mod (Stardew Valley) with the XiaoTangYuan client: connect when a save loads,
// drain the client's events on every tick, update the state once a second, close at the title.
// SMAPI runs UpdateTicked on the game's main thread, so every callback below may touch the game.
using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using StardewModdingAPI;
using StardewModdingAPI.Events;
using StardewValley;
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
            client.OnKeyRefused = refused => folder.ForgetKey(refused);   // revoked on the page: pair again next time
            // Never wait on the main thread: Start() connects in the background, and keeps trying
            // when the game was started before the server.
            client.Start();
        }

        private void OnUpdateTicked(object sender, UpdateTickedEventArgs e)
        {
            if (client == null) return;
            client.Poll();   // OnDelta, OnChatEnd, OnError, OnLog run here, on the main thread
            var p = problem;
            if (p != null) { problem = null; Monitor.Log(p, LogLevel.Warn); }
            if (e.Ticks % 60 == 0 && client.ServerHello != null) Watch(client.UpdateStateAsync(Projection.Project(Observe(), "", Game)));
        }

        /// <summary>One player turn (from the mod's chat box or voice hook).</summary>
        public void Ask(string question, string source = "text")
        {
            if (client == null) return;
            reply = "";
            Watch(client.ChatAsync(question, null, null, Projection.Project(Observe(), question, Game), source));
        }

        private void OnReturnedToTitle(object sender, ReturnedToTitleEventArgs e)
        {
            var c = client;
            client = null;
            if (c != null) c.CloseAsync().ContinueWith(_ => c.Dispose());
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
