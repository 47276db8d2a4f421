// Game events (v1.md "game.event"): the mod reports what just happened (night falling, stamina
// low, a festival tomorrow...) and the server decides whether XiaoTangYuan speaks up about it,
// within the budget the player set on the page (off by default). Its line comes back as
// chat.delta / chat.done frames with origin "companion" and, on chat.done, why it spoke and how
// to stop it: OnCompanion gets them on the game's main thread, from Poll().
// EventEdges turns a condition checked every tick into one report when it becomes true.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;
using System.Threading.Tasks;

namespace XiaoTangYuan.Adapter
{
    /// <summary>One condition per kind, checked as often as the game likes (every tick of a 60 Hz
    /// loop): Rose is true once when it turns true, then not again until it was false.</summary>
    public sealed class EventEdges
    {
        private readonly HashSet<string> holding = new HashSet<string>();

        public bool Rose(string kind, bool now)
        {
            if (!now) { holding.Remove(kind); return false; }
            return holding.Add(kind);
        }
    }

    public sealed partial class XtyClient
    {
        /// <summary>The kinds the server knows (v1.md "game.event"); another is refused locally.</summary>
        public static readonly HashSet<string> EventKinds = new HashSet<string>
        {
            "health_low", "stamina_low", "night_falling", "danger_near", "festival_tomorrow",
            "birthday_tomorrow", "quest_done", "milestone_done", "player_died", "season_changed",
            "day_ended", "sanity_low", "boss_near", "oxygen_low", "food_low", "new_duplicant",
        };
        /// <summary>The largest facts object, serialized (bytes).</summary>
        public const int EventFactsMaxBytes = 1024;

        private readonly Dictionary<string, StringBuilder> companionLines = new Dictionary<string, StringBuilder>();

        /// <summary>Called from Poll() as the companion speaks up by itself: (line id, the line so
        /// far, finished, why). On the last call finished is true and why (chat.done only) says why
        /// it spoke and how to stop it, in the player's language: show it beside the line. A line
        /// cut short (the player typed, chat.cancel) ends with finished true and why null.</summary>
        public Action<string, string, bool, string> OnCompanion;

        /// <summary>Report a game event: kind from EventKinds; facts (may be null) with any of
        /// subject, place (strings of at most 200 chars), value, maxValue (numbers), count (a whole
        /// number). Checked here first (XtyRefusedException, Local, naming the field); the server
        /// answers only a refusal (OnError). Returns once the frame is queued.</summary>
        public Task ReportEventAsync(string kind, JsonObject facts = null)
        {
            if (kind == null || !EventKinds.Contains(kind))
                throw new XtyRefusedException("invalid_frame", "kind: not a game.event kind (v1.md \"game.event\")", new List<string> { "kind" }, true);
            var frame = new JsonObject().Add("type", "game.event").Add("kind", kind)
                .Add("capturedAt", DateTime.UtcNow.ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'", CultureInfo.InvariantCulture));
            // The save it happened in: an event that arrives after a save switch is refused, not misread.
            var save = identity == null ? null : identity.Str("saveId");
            if (save != null) frame["saveId"] = save;
            if (facts != null && facts.Count > 0)
            {
                Budget.CheckContext(facts, "facts");
                int size = Json.Utf8Bytes(facts);
                if (size > EventFactsMaxBytes)
                    throw new XtyRefusedException("budget_exceeded", "facts: too large (" + size + " bytes; at most " + EventFactsMaxBytes + ")", new List<string> { "facts" }, true);
                frame["facts"] = facts;
            }
            string json = Json.Write(frame);
            Budget.CheckFrame("game.event", json);
            return SendRawAsync(json);
        }

        /// <summary>A frame of the companion's own line: handled here (true), else false.</summary>
        private bool DispatchCompanion(JsonObject frame)
        {
            if (frame.Str("origin") != "companion") return false;
            string type = frame.Str("type"), id = frame.Str("id") ?? "";
            string text, why = null;
            bool finished = type != "chat.delta";
            lock (gate)
            {
                StringBuilder line;
                if (!companionLines.TryGetValue(id, out line)) companionLines[id] = line = new StringBuilder();
                if (!finished) line.Append(frame.Str("text"));
                else
                {
                    companionLines.Remove(id);
                    if (type == "chat.done")
                    {
                        line.Length = 0;
                        line.Append(frame.Str("text"));
                        why = frame.Str("why");
                    }
                }
                text = line.ToString();
            }
            Post(() => { var f = OnCompanion; if (f != null) f(id, text, finished, why); });
            return true;
        }
    }
}
