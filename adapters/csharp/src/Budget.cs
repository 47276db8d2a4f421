// The local pre-check: the sizes and counts the server refuses (v1.md "modelContext budget",
// "Frame size limits"), checked before a frame is sent. Types, patterns and forbidden content
// are the server's to judge; it names every offending field when it refuses.
using System;
using System.Collections.Generic;
using System.Text;

namespace XiaoTangYuan.Adapter
{
    public sealed class XtyRefusedException : Exception
    {
        public readonly string Code;
        public readonly string ErrorMessage;
        public readonly List<string> Fields;
        public readonly bool Local;

        public XtyRefusedException(string code, string message, List<string> fields, bool local)
            : base((local ? "refused locally: " : "refused by the server: ") + code + ": " + message)
        {
            Code = code;
            ErrorMessage = message;
            Fields = fields ?? new List<string>();
            Local = local;
        }
    }

    public static class Budget
    {
        public const int ContextTargetBytes = 2048;
        public const int ContextMaxBytes = 6144;
        public const int StringMaxChars = 200;
        public const int ArrayMaxItems = 8;
        public const int NearbyMax = 5;
        public const int ChatTextMaxChars = 2000;
        public const int SmallFrameMaxBytes = 16384;
        public const int FrameMaxBytes = 11250348;

        /// <summary>Unicode code points, as the server counts "chars".</summary>
        public static int Chars(string s)
        {
            int n = 0;
            foreach (char c in s) if (!char.IsLowSurrogate(c)) n++;
            return n;
        }

        /// <summary>Throws XtyRefusedException (Local) naming every field over a limit.</summary>
        public static void CheckContext(JsonObject context, string prefix)
        {
            var problems = new List<string>();
            var fields = new List<string>();
            Walk(context, prefix, problems, fields);
            int size = Json.Utf8Bytes(context);
            if (size > ContextMaxBytes)
            {
                problems.Add(prefix + ": too large (" + size + " bytes; at most " + ContextMaxBytes + ")");
                fields.Add(prefix);
            }
            if (fields.Count > 0) throw new XtyRefusedException("budget_exceeded", string.Join("; ", problems.ToArray()), fields, true);
        }

        public static void CheckFrame(string type, string json)
        {
            int size = Encoding.UTF8.GetByteCount(json);
            int limit = type == "chat.send" ? FrameMaxBytes : SmallFrameMaxBytes;
            if (size > limit)
                throw new XtyRefusedException("frame_too_large", "a " + type + " frame may be at most " + limit + " bytes", null, true);
        }

        public static void CheckChatText(string text)
        {
            if (Chars(text) > ChatTextMaxChars)
                throw new XtyRefusedException("budget_exceeded", "text: too long", new List<string> { "text" }, true);
        }

        private static void Walk(object value, string path, List<string> problems, List<string> fields)
        {
            var s = value as string;
            if (s != null)
            {
                if (Chars(s) > StringMaxChars) { problems.Add(path + ": too long"); fields.Add(path); }
                return;
            }
            var obj = value as JsonObject;
            if (obj != null)
            {
                foreach (var pair in obj) Walk(pair.Value, path + "." + pair.Key, problems, fields);
                return;
            }
            var list = value as List<object>;
            if (list != null)
            {
                int max = path.EndsWith(".nearby", StringComparison.Ordinal) ? NearbyMax : ArrayMaxItems;
                if (list.Count > max) { problems.Add(path + ": too many items (" + list.Count + "; at most " + max + ")"); fields.Add(path); }
                for (int i = 0; i < list.Count; i++) Walk(list[i], path + "[" + i + "]", problems, fields);
            }
        }
    }
}
