// A small JSON reader and writer for protocol/v1 frames: no third-party serializer.
// Compiles for .NET Framework 4.x (Unity's Mono: Oxygen Not Included) and .NET 6 (SMAPI: Stardew).
using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace XiaoTangYuan.Adapter
{
    /// <summary>A JSON object that keeps its keys in insertion order. Keys are written as given:
    /// protocol/v1 keys are camelCase ("heldItem", never "HeldItem").</summary>
    public sealed class JsonObject : IEnumerable<KeyValuePair<string, object>>
    {
        private readonly List<KeyValuePair<string, object>> items = new List<KeyValuePair<string, object>>();

        public int Count { get { return items.Count; } }

        public object this[string key]
        {
            get { int i = IndexOf(key); return i < 0 ? null : items[i].Value; }
            set
            {
                int i = IndexOf(key);
                var pair = new KeyValuePair<string, object>(key, Json.Normalize(value));
                if (i < 0) items.Add(pair); else items[i] = pair;
            }
        }

        public JsonObject Add(string key, object value) { this[key] = value; return this; }
        public bool ContainsKey(string key) { return IndexOf(key) >= 0; }
        public bool Remove(string key)
        {
            int i = IndexOf(key);
            if (i < 0) return false;
            items.RemoveAt(i);
            return true;
        }
        public IEnumerable<string> Keys { get { foreach (var p in items) yield return p.Key; } }

        public JsonObject Obj(string key) { return this[key] as JsonObject; }
        public List<object> List(string key) { return this[key] as List<object>; }
        public string Str(string key) { return this[key] as string; }

        public JsonObject Clone() { return (JsonObject)Json.Parse(Json.Write(this)); }

        private int IndexOf(string key)
        {
            for (int i = 0; i < items.Count; i++) if (items[i].Key == key) return i;
            return -1;
        }

        public IEnumerator<KeyValuePair<string, object>> GetEnumerator() { return items.GetEnumerator(); }
        IEnumerator IEnumerable.GetEnumerator() { return items.GetEnumerator(); }
    }

    public sealed class JsonException : Exception
    {
        public JsonException(string message) : base(message) { }
    }

    /// <summary>Parse and write JSON. Parsed values: JsonObject, List&lt;object&gt;, string,
    /// long (integers) or double, bool, null. Writing takes those plus every integer type (signed
    /// or unsigned), float, decimal, dictionaries with string keys and any other list.</summary>
    public static class Json
    {
        /// <summary>What a JsonObject stores for a value: dictionaries become JsonObject and lists
        /// List&lt;object&gt; (so Budget and Projection see one shape), small unsigned integers long.</summary>
        public static object Normalize(object value)
        {
            if (value == null || value is string || value is JsonObject || value is List<object>) return value;
            if (value is uint || value is ushort || value is sbyte) return Convert.ToInt64(value, CultureInfo.InvariantCulture);
            var generic = value as IDictionary<string, object>;
            if (generic != null)
            {
                var obj = new JsonObject();
                foreach (var pair in generic) obj[pair.Key] = pair.Value;
                return obj;
            }
            var dict = value as IDictionary;
            if (dict != null)
            {
                var obj = new JsonObject();
                foreach (DictionaryEntry entry in dict)
                {
                    var key = entry.Key as string;
                    if (key == null) throw new JsonException("a dictionary key must be a string, not " + entry.Key.GetType().Name);
                    obj[key] = entry.Value;
                }
                return obj;
            }
            var items = value as IEnumerable;
            if (items != null)
            {
                var list = new List<object>();
                foreach (var item in items) list.Add(Normalize(item));
                return list;
            }
            return value;
        }

        public static object Parse(string text)
        {
            var p = new Parser(text);
            p.Space();
            object value = p.Value(0);
            p.Space();
            if (p.Pos != text.Length) throw new JsonException("trailing characters at " + p.Pos);
            return value;
        }

        public static string Write(object value)
        {
            var sb = new StringBuilder();
            WriteValue(sb, value);
            return sb.ToString();
        }

        /// <summary>The UTF-8 size of the compact JSON of a value: what the server measures.</summary>
        public static int Utf8Bytes(object value) { return Encoding.UTF8.GetByteCount(Write(value)); }

        private static void WriteValue(StringBuilder sb, object value)
        {
            if (value == null) { sb.Append("null"); return; }
            var s = value as string;
            if (s != null) { WriteString(sb, s); return; }
            if (value is bool) { sb.Append((bool)value ? "true" : "false"); return; }
            if (value is int || value is long || value is short || value is byte || value is uint || value is ushort || value is sbyte)
            {
                sb.Append(Convert.ToInt64(value, CultureInfo.InvariantCulture).ToString(CultureInfo.InvariantCulture));
                return;
            }
            if (value is ulong) { sb.Append(((ulong)value).ToString(CultureInfo.InvariantCulture)); return; }
            if (value is double || value is float || value is decimal)
            {
                double d = Convert.ToDouble(value, CultureInfo.InvariantCulture);
                if (double.IsNaN(d) || double.IsInfinity(d)) throw new JsonException("NaN and Infinity are not JSON");
                // A whole number is written without ".0" (the server takes 45.0 too), never with a decimal comma.
                if (Math.Floor(d) == d && Math.Abs(d) < 1e15) sb.Append(((long)d).ToString(CultureInfo.InvariantCulture));
                // A float in its own shortest round-trip form: 72.3f is "72.3", not its double 72.300003051757813.
                else if (value is float) sb.Append(((float)value).ToString("R", CultureInfo.InvariantCulture));
                else if (value is decimal) sb.Append(((decimal)value).ToString(CultureInfo.InvariantCulture));
                else sb.Append(d.ToString("R", CultureInfo.InvariantCulture));
                return;
            }
            var obj = value as JsonObject;
            if (obj != null)
            {
                sb.Append('{');
                bool first = true;
                foreach (var pair in obj)
                {
                    if (pair.Value == null) continue; // optional fields: omit rather than null
                    if (!first) sb.Append(',');
                    first = false;
                    WriteString(sb, pair.Key);
                    sb.Append(':');
                    WriteValue(sb, pair.Value);
                }
                sb.Append('}');
                return;
            }
            if (value is IDictionary || value is IDictionary<string, object>) { WriteValue(sb, Normalize(value)); return; }
            var list = value as IEnumerable;
            if (list != null)
            {
                sb.Append('[');
                bool first = true;
                foreach (var item in list)
                {
                    if (!first) sb.Append(',');
                    first = false;
                    WriteValue(sb, item);
                }
                sb.Append(']');
                return;
            }
            throw new JsonException("cannot write a " + value.GetType().Name + " as JSON");
        }

        private static void WriteString(StringBuilder sb, string s)
        {
            sb.Append('"');
            foreach (char c in s)
            {
                switch (c)
                {
                    case '"': sb.Append("\\\""); break;
                    case '\\': sb.Append("\\\\"); break;
                    case '\n': sb.Append("\\n"); break;
                    case '\r': sb.Append("\\r"); break;
                    case '\t': sb.Append("\\t"); break;
                    default:
                        if (c < 0x20) sb.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
                        else sb.Append(c);
                        break;
                }
            }
            sb.Append('"');
        }

        private sealed class Parser
        {
            private readonly string s;
            public int Pos;

            public Parser(string text) { s = text; }

            public void Space()
            {
                while (Pos < s.Length && (s[Pos] == ' ' || s[Pos] == '\t' || s[Pos] == '\n' || s[Pos] == '\r')) Pos++;
            }

            private JsonException Fail(string what) { return new JsonException(what + " at " + Pos); }

            public object Value(int depth)
            {
                if (depth > 64) throw Fail("nested too deeply");
                if (Pos >= s.Length) throw Fail("unexpected end");
                char c = s[Pos];
                if (c == '{') return Object(depth);
                if (c == '[') return Array(depth);
                if (c == '"') return String();
                if (c == 't' && Lit("true")) return true;
                if (c == 'f' && Lit("false")) return false;
                if (c == 'n' && Lit("null")) return null;
                return Number();
            }

            private bool Lit(string word)
            {
                if (string.CompareOrdinal(s, Pos, word, 0, word.Length) != 0) throw Fail("invalid literal");
                Pos += word.Length;
                return true;
            }

            private JsonObject Object(int depth)
            {
                var obj = new JsonObject();
                Pos++;
                Space();
                if (Pos < s.Length && s[Pos] == '}') { Pos++; return obj; }
                while (true)
                {
                    Space();
                    if (Pos >= s.Length || s[Pos] != '"') throw Fail("expected a key");
                    string key = String();
                    Space();
                    if (Pos >= s.Length || s[Pos] != ':') throw Fail("expected ':'");
                    Pos++;
                    Space();
                    obj[key] = Value(depth + 1);
                    Space();
                    if (Pos < s.Length && s[Pos] == ',') { Pos++; continue; }
                    if (Pos < s.Length && s[Pos] == '}') { Pos++; return obj; }
                    throw Fail("expected ',' or '}'");
                }
            }

            private List<object> Array(int depth)
            {
                var list = new List<object>();
                Pos++;
                Space();
                if (Pos < s.Length && s[Pos] == ']') { Pos++; return list; }
                while (true)
                {
                    Space();
                    list.Add(Value(depth + 1));
                    Space();
                    if (Pos < s.Length && s[Pos] == ',') { Pos++; continue; }
                    if (Pos < s.Length && s[Pos] == ']') { Pos++; return list; }
                    throw Fail("expected ',' or ']'");
                }
            }

            private string String()
            {
                var sb = new StringBuilder();
                Pos++;
                while (true)
                {
                    if (Pos >= s.Length) throw Fail("unterminated string");
                    char c = s[Pos++];
                    if (c == '"') return sb.ToString();
                    if (c != '\\') { sb.Append(c); continue; }
                    if (Pos >= s.Length) throw Fail("unterminated escape");
                    char e = s[Pos++];
                    switch (e)
                    {
                        case '"': sb.Append('"'); break;
                        case '\\': sb.Append('\\'); break;
                        case '/': sb.Append('/'); break;
                        case 'b': sb.Append('\b'); break;
                        case 'f': sb.Append('\f'); break;
                        case 'n': sb.Append('\n'); break;
                        case 'r': sb.Append('\r'); break;
                        case 't': sb.Append('\t'); break;
                        case 'u':
                            if (Pos + 4 > s.Length) throw Fail("short \\u escape");
                            sb.Append((char)int.Parse(s.Substring(Pos, 4), NumberStyles.HexNumber, CultureInfo.InvariantCulture));
                            Pos += 4;
                            break;
                        default: throw Fail("invalid escape");
                    }
                }
            }

            private object Number()
            {
                int start = Pos;
                bool integral = true;
                while (Pos < s.Length && "+-0123456789.eE".IndexOf(s[Pos]) >= 0)
                {
                    if (s[Pos] == '.' || s[Pos] == 'e' || s[Pos] == 'E') integral = false;
                    Pos++;
                }
                string text = s.Substring(start, Pos - start);
                if (text.Length == 0) throw Fail("unexpected character");
                long l;
                if (integral && long.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out l)) return l;
                double d;
                if (double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out d)) return d;
                throw Fail("invalid number");
            }
        }
    }
}
