// A minimal Oxygen Not Included mod (KMod.UserMod2) with the XiaoTangYuan client. OnLoad makes a
// GameObject whose behaviour Unity updates once a frame on the main thread: it connects when a
// colony is loaded, drains the client's events (client.Poll()) every frame, updates the state
// once a second and closes when the colony is left. Unity keeps calling Update() while the game
// is paused, and the client's heartbeats run on their own timer anyway. Two actions XiaoTangYuan
// may take (v1.md "Actions"): pan_camera (look) and set_priority (act), each checked against the
// colony itself and refused with why.
// Game events (v1.md "game.event"), checked once a second in the same Update(): a duplicant short
// of breath (oxygen low), less food than the colony eats in a cycle, a new duplicant; each
// reported once when it starts, and XiaoTangYuan may speak up about it (off by default).
using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using HarmonyLib;
using KMod;
using UnityEngine;
using XiaoTangYuan.Adapter;

namespace XiaoTangYuan.Oni
{
    public sealed class XtyMod : UserMod2
    {
        public static ModFolder Folder;

        public override void OnLoad(Harmony harmony)
        {
            base.OnLoad(harmony);
            // The salt and the key live in mods/config/XiaoTangYuan (where PLib keeps shared
            // configs), which a mod update does not replace; an older version's files move there.
            Folder = new ModFolder(path, System.IO.Path.Combine(Manager.GetDirectory(), "config", "XiaoTangYuan"));
            foreach (var name in Folder.Moved) Debug.Log("[XiaoTangYuan] moved " + name + " out of the mod's folder into mods/config");
            var driver = new GameObject("XiaoTangYuan");
            UnityEngine.Object.DontDestroyOnLoad(driver);
            driver.AddComponent<XtyDriver>();
        }
    }

    public sealed class XtyDriver : MonoBehaviour
    {
        private const string Game = "oxygen-not-included";
        private XtyClient client;
        private SaveGame colony;
        private string reply = "";
        private DateTime nextState;
        private volatile string problem;
        private readonly EventEdges edges = new EventEdges();
        private int duplicants = -1;   // the live duplicants last seen (-1: not yet counted)

        // Unity calls it once a frame on the main thread.
        private void Update()
        {
            if (SaveGame.Instance != colony) Switch(SaveGame.Instance);
            if (client == null) return;
            client.Poll();
            var p = problem;
            if (p != null) { problem = null; Debug.LogWarning("[XiaoTangYuan] " + p); }
            if (client.ServerHello != null && DateTime.UtcNow >= nextState)
            {
                nextState = DateTime.UtcNow.AddSeconds(1);
                Watch(client.UpdateStateAsync(Projection.Project(Observe(), "", Game)));
                WatchEvents();
            }
        }

        private void WatchEvents()
        {
            var minions = Components.LiveMinionIdentities.Items;
            if (duplicants >= 0 && minions.Count > duplicants)
            {
                var newest = minions[minions.Count - 1];
                Report("new_duplicant", new JsonObject().Add("subject", newest.GetProperName()).Add("count", minions.Count));
            }
            duplicants = minions.Count;
            MinionIdentity gasping = null;
            AmountInstance breath = null;
            foreach (var minion in minions)
            {
                breath = Db.Get().Amounts.Breath.Lookup(minion);
                if (breath != null && breath.value < breath.GetMax() * 0.5f) { gasping = minion; break; }
            }
            if (edges.Rose("oxygen_low", gasping != null))
                Report("oxygen_low", new JsonObject().Add("subject", gasping.GetProperName())
                    .Add("value", Math.Round((double)breath.value)).Add("maxValue", Math.Round((double)breath.GetMax())));
            // Calories: 1 kcal is 1000; a duplicant eats 1000 kcal a cycle.
            var world = ClusterManager.Instance == null ? null : ClusterManager.Instance.activeWorld;
            if (world == null) return;
            double kcal = RationTracker.Get().CountRations(null, world.worldInventory, true) / 1000.0;
            if (edges.Rose("food_low", minions.Count > 0 && kcal < minions.Count * 1000.0))
                Report("food_low", new JsonObject().Add("value", Math.Round(kcal)).Add("count", minions.Count));
        }

        private void Report(string kind, JsonObject facts)
        {
            Debug.Log("[XiaoTangYuan] event " + kind);
            Watch(client.ReportEventAsync(kind, facts));
        }

        private void Switch(SaveGame loaded)
        {
            if (client != null) { var c = client; c.CloseAsync().ContinueWith(_ => c.Dispose()); client = null; }
            colony = loaded;
            if (loaded == null) return;
            var folder = XtyMod.Folder;
            // The colony's name and its world seed (the worldgen seed setting the save was made with):
            // two colonies of the same name have different seeds, so different saveIds.
            string seed = CustomGameSettings.Instance.GetCurrentQualitySetting(CustomGameSettingConfigs.WorldgenSeed).id;
            var features = new Dictionary<string, string> { { "colony", loaded.BaseName }, { "seed", seed } };
            var identity = new JsonObject().Add("gameId", Game)
                .Add("saveId", SaveId.Derive(features, folder.Salt())).Add("saveName", loaded.BaseName);
            client = new XtyClient(folder.Url(), folder.Key(), identity, "XTY ONI", "0.1.0", null);
            client.OnDelta = (id, text) => { reply += text; Debug.Log("[XiaoTangYuan] " + reply); };
            client.OnChatEnd = r => { if (!r.Done) Debug.Log("[XiaoTangYuan] 没有回答（" + r.Code + "）/ no answer (" + r.Code + ")"); };
            client.OnLog = line => Debug.Log("[XiaoTangYuan] " + line);
            // XiaoTangYuan speaking up by itself: the whole line, then why it spoke.
            client.OnCompanion = (id, text, finished, why) =>
            {
                if (!finished || text == "") return;
                Debug.Log("[XiaoTangYuan] " + text);
                if (why != null) Debug.Log("[XiaoTangYuan] (" + why + ")");
            };
            // No key yet: the client pairs; the player allows the code on the memory page once.
            client.OnPairCode = (code, seconds) => Debug.Log("[XiaoTangYuan] 在小汤圆页面上确认配对码 " + code + " / Confirm code " + code + " on the XiaoTangYuan page");
            client.OnPaired = key => folder.SaveKey(key);   // folder.Key() returns it from the next start on
            client.KeySource = folder.Key;   // another copy of the mod may have paired: its key, no second pairing
            client.InstallId = folder.InstallId();   // a key per install: another account's install keeps its own
            client.OnKeyRefused = refused => folder.ForgetKey(refused);   // revoked on the page: pair again next time
            client.AddAction(new XtyAction
            {
                Name = "pan_camera", Risk = "look",
                Description = "把镜头移到一个复制人身上", DescriptionEn = "pan the camera to a duplicant",
                Parameters = new JsonObject()
                    .Add("properties", new JsonObject().Add("duplicant", new JsonObject().Add("type", "string").Add("maxLength", 40)))
                    .Add("required", new List<object> { "duplicant" }),
                Run = (args, confirmed) => PanCamera(args.Str("duplicant")),
            });
            client.AddAction(new XtyAction
            {
                Name = "set_priority", Risk = "act", CooldownMs = 1000,
                Description = "设置玩家选中的建筑的优先级（1-9）", DescriptionEn = "set the selected building's priority (1-9)",
                Parameters = new JsonObject()
                    .Add("properties", new JsonObject().Add("priority", new JsonObject().Add("type", "integer").Add("minimum", 1).Add("maximum", 9)))
                    .Add("required", new List<object> { "priority" }),
                Run = (args, confirmed) => SetPriority(args["priority"] is long ? (int)(long)args["priority"] : 0),
            });
            client.Start();   // connects in the background (and keeps trying): Update() must return
        }

        /// <summary>One player turn (from the mod's UI).</summary>
        public void Ask(string question)
        {
            if (client == null) return;
            reply = "";
            Watch(client.ChatAsync(question, null, null, Projection.Project(Observe(), question, Game)));
        }

        private static ActionOutcome PanCamera(string duplicant)
        {
            if (CameraController.Instance == null) return ActionOutcome.Refused("镜头还没准备好 / no camera yet");
            foreach (var minion in Components.LiveMinionIdentities.Items)
            {
                if (minion.GetProperName() != duplicant) continue;
                CameraController.Instance.SetTargetPos(minion.transform.GetPosition(), 8f, true);
                return ActionOutcome.Done("镜头移到了" + duplicant);
            }
            return ActionOutcome.Refused("殖民地里没有叫" + duplicant + "的复制人 / no duplicant called " + duplicant);
        }

        private static ActionOutcome SetPriority(int priority)
        {
            if (priority < 1 || priority > 9) return ActionOutcome.Refused("优先级只能是 1 到 9");
            var selected = SelectTool.Instance == null ? null : SelectTool.Instance.selected;
            if (selected == null) return ActionOutcome.Refused("玩家没有选中任何建筑 / nothing is selected");
            var prioritizable = selected.GetComponent<Prioritizable>();
            if (prioritizable == null) return ActionOutcome.Refused(selected.PrefabID().ProperName() + "没有优先级 / it has no priority");
            prioritizable.SetMasterPriority(new PrioritySetting(PriorityScreen.PriorityClass.basic, priority));
            return ActionOutcome.Done(selected.PrefabID().ProperName() + "的优先级设为 " + priority);
        }

        private static JsonObject Observe()
        {
            var observation = new JsonObject()
                .Add("world", new JsonObject().Add("location", SaveGame.Instance.BaseName).Add("day", GameClock.Instance.GetCycle()))
                .Add("ui", new JsonObject().Add("busy", false));
            // ONI's player holds nothing; what they look at is the selected object, named as
            // the game shows it in the player's language (the prefab tag's ProperName()).
            var selected = SelectTool.Instance == null ? null : SelectTool.Instance.selected;
            if (selected != null)
                observation.Add("focus", new JsonObject().Add("kind", "selected").Add("name", selected.PrefabID().ProperName()));
            return observation;
        }

        private void Watch(Task task)
        {
            task.ContinueWith(t => problem = t.Exception.GetBaseException().Message, TaskContinuationOptions.OnlyOnFaulted);
        }
    }
}
