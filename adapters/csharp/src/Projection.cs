// project(observation, question, game) -> modelContext: the same rules and order as
// xtyserver.adapter.project (docs/adapter-client.md "Projection"), read from ProjectionRules.cs,
// a copy of xtyserver/adapter/projection.json that a test keeps equal.
// The server's forbidden-content check (paths, keys, e-mail) is not repeated here: keep such
// text out of the observation, or the server refuses the frame naming the field.
using System;
using System.Collections.Generic;
using System.Linq;

namespace XiaoTangYuan.Adapter
{
    public static class Projection
    {
        private static JsonObject rules;
        private static readonly string[][] Sections =
        {
            new[] { "world", "location:str", "time:str", "season:str", "weather:str", "day:count" },
            new[] { "player", "health:gauge", "stamina:gauge", "status:strs", "heldItem:str", "heldItemName:str" },
            new[] { "focus", "kind:str", "name:str", "reachable:bool" },
            new[] { "ui", "busy:bool", "menu:str" },
        };

        public static JsonObject Rules
        {
            get
            {
                if (rules == null) rules = (JsonObject)Json.Parse(ProjectionRules.Text);
                return rules;
            }
        }

        private static int Int(string key) { return Convert.ToInt32(Rules[key]); }

        public static List<string> Topics(string question, string game)
        {
            var found = new List<string>();
            // A leading space before the question: a word " eat" matches only at a word's start.
            string text = " " + question.ToLowerInvariant();
            foreach (JsonObject rule in GameRules(game))
                if (rule.List("words").Any(w => text.Contains((string)w)))
                    found.Add(rule.Str("topic"));
            return found;
        }

        private static List<object> GameRules(string game)
        {
            return Rules.Obj("games").List(game) ?? new List<object>();
        }

        public static JsonObject Project(JsonObject observation, string question, string game)
        {
            var names = Topics(question, game);
            var found = GameRules(game).Cast<JsonObject>().Where(t => names.Contains(t.Str("topic"))).ToList();
            var fields = found.Count > 0
                ? found.SelectMany(t => t.List("fields").Cast<string>()).ToList()
                : Rules.Obj("general").List("fields").Cast<string>().ToList();
            fields.AddRange(Rules.List("always").Cast<string>());
            var pieces = new List<KeyValuePair<string, object>>();
            foreach (var path in fields.Distinct())
            {
                object value = Field(observation, path);
                if (value != null) pieces.Add(new KeyValuePair<string, object>(path, value));
            }
            foreach (var e in Nearby(observation, found)) pieces.Add(new KeyValuePair<string, object>("nearby", e));
            foreach (var i in Items(observation, found)) pieces.Add(new KeyValuePair<string, object>("relevantItems", i));

            var context = new JsonObject().Add("schemaVersion", 1L);
            var stamp = observation.Str("capturedAt");
            if (stamp != null && StringOk(stamp)) context["capturedAt"] = stamp;
            foreach (var piece in pieces)
            {
                var trial = With(context, piece.Key, piece.Value);
                if (trial != null && Json.Utf8Bytes(trial) <= Int("targetBytes")) context = trial;
            }
            return Ordered(context);
        }

        private static string Kind(string section, string name)
        {
            foreach (var s in Sections)
                if (s[0] == section)
                    foreach (var f in s.Skip(1))
                        if (f.StartsWith(name + ":", StringComparison.Ordinal)) return f.Substring(name.Length + 1);
            throw new ArgumentException("not a modelContext field: " + section + "." + name);
        }

        private static object Field(JsonObject observation, string path)
        {
            int dot = path.IndexOf('.');
            string section = path.Substring(0, dot), name = path.Substring(dot + 1);
            var part = observation.Obj(section);
            return part == null ? null : Valid(Kind(section, name), part[name]);
        }

        private static bool IsNumber(object v) { return v is long || v is double || v is int || v is float; }

        private static object Valid(string kind, object value)
        {
            if (value is bool) return kind == "bool" ? value : null;
            switch (kind)
            {
                case "str":
                    var s = value as string;
                    return s != null && StringOk(s) ? s : null;
                case "strs":
                    var list = value as List<object>;
                    if (list == null) return null;
                    var kept = list.OfType<string>().Where(StringOk).Take(Int("maxStatus")).Cast<object>().ToList();
                    return kept.Count > 0 ? kept : null;
                case "gauge":
                case "distance":
                    if (!IsNumber(value)) return null;
                    double d = Convert.ToDouble(value);
                    double low = kind == "distance" ? 0 : -1e9;
                    return !double.IsNaN(d) && !double.IsInfinity(d) && d >= low && d <= 1e9 ? value : null;
                case "count":
                    if (!IsNumber(value)) return null;
                    double n = Convert.ToDouble(value);
                    return Math.Floor(n) == n && n >= 0 && n <= 1e9 ? (object)(long)n : null;
            }
            return null;
        }

        private static bool StringOk(string s) { return Budget.Chars(s) <= Int("maxStringChars"); }

        private static bool Matches(string name, IEnumerable<string> tags, IEnumerable<string> words, string topic)
        {
            string low = name.ToLowerInvariant();
            var tagged = new HashSet<string>(tags.Select(t => t.ToLowerInvariant()));
            return tagged.Contains(topic) || words.Any(w => low.Contains(w) || tagged.Contains(w));
        }

        private static JsonObject Entity(object raw)
        {
            var obj = raw as JsonObject;
            if (obj == null) return null;
            var e = new JsonObject();
            foreach (var f in new[] { "kind:str", "name:str", "distance:distance" })
            {
                string key = f.Split(':')[0];
                object v = Valid(f.Split(':')[1], obj[key]);
                if (v != null) e[key] = v;
            }
            return e.Count > 0 ? e : null;
        }

        private static List<JsonObject> Nearby(JsonObject observation, List<JsonObject> found)
        {
            var raw = observation.List("nearby") ?? new List<object>();
            // Closest first; OrderBy is stable, so the observation's order breaks ties.
            var entities = raw.Select(Entity).Where(e => e != null)
                .OrderBy(e => e.ContainsKey("distance") ? Convert.ToDouble(e["distance"]) : double.PositiveInfinity).ToList();
            if (found.Count == 0) return entities.Take(Convert.ToInt32(Rules.Obj("general")["nearby"])).ToList();
            var kinds = new HashSet<string>(found.SelectMany(t => t.List("kinds").Cast<string>()));
            var words = found.SelectMany(t => t.List("match").Cast<string>()).ToList();
            return entities.Where(e => kinds.Contains((e.Str("kind") ?? "").ToLowerInvariant())
                || Matches(e.Str("name") ?? "", new string[0], words, "")).ToList();
        }

        private static List<JsonObject> Items(JsonObject observation, List<JsonObject> found)
        {
            var candidates = new List<KeyValuePair<JsonObject, List<string>>>();
            foreach (var key in new[] { "relevantItems", "inventory" })
            {
                foreach (var raw in observation.List(key) ?? new List<object>())
                {
                    var obj = raw as JsonObject;
                    if (obj == null) continue;
                    var name = Valid("str", obj["name"]) as string;
                    if (name == null) continue;
                    var item = new JsonObject().Add("name", name);
                    object count = Valid("count", obj["count"]);
                    if (count != null) item["count"] = count;
                    var tags = (obj.List("tags") ?? new List<object>()).OfType<string>().ToList();
                    candidates.Add(new KeyValuePair<JsonObject, List<string>>(item, tags));
                }
            }
            List<JsonObject> picked;
            if (found.Count > 0)
                picked = candidates.Where(c => found.Any(t => Matches(c.Key.Str("name"), c.Value,
                    t.List("match").Cast<string>(), t.Str("topic")))).Select(c => c.Key).ToList();
            else
                picked = candidates.Take(Convert.ToInt32(Rules.Obj("general")["items"])).Select(c => c.Key).ToList();
            var wanted = new HashSet<string>();
            foreach (var raw in observation.List("quests") ?? new List<object>())
            {
                var quest = raw as JsonObject;
                var items = quest == null ? null : quest.List("items");
                if (items != null) foreach (var i in items.OfType<string>()) wanted.Add(i.ToLowerInvariant());
            }
            picked.AddRange(candidates.Where(c => wanted.Contains(c.Key.Str("name").ToLowerInvariant())).Select(c => c.Key));
            var seen = new HashSet<string>();
            return picked.Where(i => seen.Add(i.Str("name"))).ToList();
        }

        private static JsonObject With(JsonObject context, string path, object value)
        {
            var trial = new JsonObject();
            foreach (var pair in context) trial[pair.Key] = pair.Value;
            if (path == "nearby" || path == "relevantItems")
            {
                int limit = Int(path == "nearby" ? "maxNearby" : "maxItems");
                var current = new List<object>(context.List(path) ?? new List<object>());
                if (current.Count >= limit) return null;
                current.Add(value);
                trial[path] = current;
                return trial;
            }
            int dot = path.IndexOf('.');
            string section = path.Substring(0, dot), name = path.Substring(dot + 1);
            var part = new JsonObject();
            foreach (var pair in context.Obj(section) ?? new JsonObject()) part[pair.Key] = pair.Value;
            part[name] = value;
            trial[section] = part;
            return trial;
        }

        private static JsonObject Ordered(JsonObject context)
        {
            var output = new JsonObject();
            foreach (var key in new[] { "schemaVersion", "capturedAt", "world", "player", "focus", "nearby", "relevantItems", "ui" })
            {
                if (!context.ContainsKey(key)) continue;
                var section = Sections.FirstOrDefault(s => s[0] == key);
                if (section == null) { output[key] = context[key]; continue; }
                var part = context.Obj(key);
                var ordered = new JsonObject();
                foreach (var f in section.Skip(1))
                {
                    string name = f.Split(':')[0];
                    if (part.ContainsKey(name)) ordered[name] = part[name];
                }
                output[key] = ordered;
            }
            return output;
        }
    }
}
