// Game actions the mod declares (v1.md "Actions"): what XiaoTangYuan may do in the game. Each is
// declared with a name, a description (Chinese, English), an argument schema, a risk class and an
// optional cooldown, and runs on the game's main thread (from Poll()) when the server sends
// action.request: Run checks the request against the mod's full local observation (reachable? in
// a menu or a cutscene? has the item?) and does it, or refuses with a reason the player can read.
// The mod has the last word: the server only asks.
using System;
using System.Collections.Generic;
using System.Threading.Tasks;

namespace XiaoTangYuan.Adapter
{
    /// <summary>What came of an action.request: done, refused (with why) or failed.</summary>
    public sealed class ActionOutcome
    {
        public string Status;
        public string Text;
        public static ActionOutcome Done(string text) { return new ActionOutcome { Status = "done", Text = text ?? "" }; }
        public static ActionOutcome Refused(string why) { return new ActionOutcome { Status = "refused", Text = why ?? "" }; }
        public static ActionOutcome Failed(string why) { return new ActionOutcome { Status = "failed", Text = why ?? "" }; }
    }

    /// <summary>One action the mod offers. Risk: "look" (harmless: point, highlight, a waypoint),
    /// "act" (changes the game: walk, craft) or "risky" (costly or hard to undo: the server asks
    /// the player first; the request then carries confirmed = true).</summary>
    public sealed class XtyAction
    {
        public string Name, Description, DescriptionEn, Risk = "look";
        /// <summary>{"properties": {...}, "required": [...]}: strings (enum or maxLength),
        /// integers (minimum and maximum), booleans.</summary>
        public JsonObject Parameters;
        public int CooldownMs;
        /// <summary>Runs on the game's main thread with the checked arguments; must check its
        /// preconditions itself against the full observation, and answer quickly (within the
        /// request's deadlineMs: start a long walk and answer "done", do not wait for arrival).</summary>
        public Func<JsonObject, bool, ActionOutcome> Run;

        public JsonObject Declaration()
        {
            var d = new JsonObject().Add("name", Name).Add("description", Description).Add("risk", Risk);
            if (DescriptionEn != null) d["descriptionEn"] = DescriptionEn;
            if (Parameters != null) d["parameters"] = Parameters;
            if (CooldownMs > 0) d["cooldownMs"] = CooldownMs;
            return d;
        }

        /// <summary>A string argument with an enum (the values the model may choose).</summary>
        public static JsonObject Choice(string description, params string[] values)
        {
            return new JsonObject().Add("type", "string").Add("description", description).Add("enum", new List<object>(values));
        }
    }

    public sealed partial class XtyClient
    {
        private readonly Dictionary<string, XtyAction> actions = new Dictionary<string, XtyAction>();
        /// <summary>Called from Poll() with (name, args, outcome) of every action run (the mod's own log).</summary>
        public Action<string, JsonObject, ActionOutcome> OnActionRun;

        /// <summary>Offer an action; call before Start() (they go in adapter.hello), or call
        /// DeclareActionsAsync() afterwards to replace the declared set.</summary>
        public void AddAction(XtyAction action)
        {
            lock (actions) actions[action.Name] = action;
        }

        public void RemoveAction(string name) { lock (actions) actions.Remove(name); }

        private List<object> Declarations()
        {
            var list = new List<object>();
            lock (actions) foreach (var a in actions.Values) list.Add(a.Declaration());
            return list;
        }

        /// <summary>Replace the declared actions with those added now (actions.declare): the
        /// server answers actions.declared, or an error naming the offending field.</summary>
        public Task<JsonObject> DeclareActionsAsync()
        {
            return RequestAsync(new JsonObject().Add("type", "actions.declare").Add("actions", Declarations()));
        }

        private bool DispatchAction(JsonObject frame)
        {
            if (frame.Str("type") != "action.request") return false;
            string id = frame.Str("id"), name = frame.Str("name");
            var args = frame.Obj("args") ?? new JsonObject();
            bool confirmed = frame["confirmed"] is bool && (bool)frame["confirmed"];
            // Run on the game's main thread, where the game may be read and changed.
            Post(() =>
            {
                XtyAction action;
                lock (actions) actions.TryGetValue(name ?? "", out action);
                ActionOutcome outcome;
                if (action == null || action.Run == null) outcome = ActionOutcome.Refused("这个游戏没有这个动作 / no such action");
                else
                {
                    try { outcome = action.Run(args, confirmed) ?? ActionOutcome.Failed("no outcome"); }
                    catch (Exception e) { outcome = ActionOutcome.Failed(e.GetType().Name); }
                }
                string text = outcome.Text ?? "";
                if (text.Length > 200) text = text.Substring(0, 200);
                var result = new JsonObject().Add("type", "action.result").Add("id", id)
                    .Add("status", outcome.Status).Add("text", text);
                var f = OnActionRun;
                if (f != null) f(name, args, outcome);
                SendRawAsync(Json.Write(result)).ContinueWith(t => Log("action.result not sent: " + t.Exception.GetBaseException().Message),
                    TaskContinuationOptions.OnlyOnFaulted);
            });
            return true;
        }
    }
}
