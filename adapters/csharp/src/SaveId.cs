// saveId: HMAC-SHA256 of the save's stable features with a per-install salt (v1.md "Identity").
// The same algorithm as xtyserver.adapter.derive_save_id and the DST adapter's saveid.lua.
using System;
using System.Collections.Generic;
using System.Security.Cryptography;
using System.Text;

namespace XiaoTangYuan.Adapter
{
    public static class SaveId
    {
        private const string Base32 = "abcdefghijklmnopqrstuvwxyz234567";

        /// <summary>A fresh salt: 32 lowercase hex characters. Make it once per install and keep it
        /// in the mod's config beside the token; never send it.</summary>
        public static string NewSalt()
        {
            var bytes = new byte[16];
            using (var rng = RandomNumberGenerator.Create()) rng.GetBytes(bytes);
            var sb = new StringBuilder();
            foreach (byte b in bytes) sb.Append(b.ToString("x2"));
            return sb.ToString();
        }

        /// <summary>The canonical message: features sorted by key in code point order (v1.md
        /// "Identity"), each key U+001F value U+001E.</summary>
        public static byte[] Message(IDictionary<string, string> features)
        {
            var keys = new List<string>(features.Keys);
            keys.Sort(CompareCodePoints);
            var sb = new StringBuilder();
            foreach (var key in keys) sb.Append(key).Append('\u001f').Append(features[key]).Append('\u001e');
            return Encoding.UTF8.GetBytes(sb.ToString());
        }

        /// <summary>Code point order, as Python's sorted() and Lua's byte order of UTF-8 have it.
        /// string.CompareOrdinal compares UTF-16 units, which puts an emoji (a surrogate pair,
        /// D800-DFFF) before a full-width letter (FF21-FF5A) though its code point is greater.</summary>
        public static int CompareCodePoints(string a, string b)
        {
            int i = 0, j = 0;
            while (i < a.Length && j < b.Length)
            {
                int x = CodePointAt(a, ref i), y = CodePointAt(b, ref j);
                if (x != y) return x < y ? -1 : 1;
            }
            return (a.Length - i).CompareTo(b.Length - j);
        }

        // A lone surrogate (not text a game should send) sorts by its unit.
        private static int CodePointAt(string s, ref int i)
        {
            char c = s[i++];
            if (char.IsHighSurrogate(c) && i < s.Length && char.IsLowSurrogate(s[i])) return char.ConvertToUtf32(c, s[i++]);
            return c;
        }

        /// <summary>26 characters of a-z2-7, e.g. for {farm, created, seed}. Never pass a path,
        /// a user name or an account id as a feature.</summary>
        public static string Derive(IDictionary<string, string> features, string salt)
        {
            if (features == null || features.Count == 0 || string.IsNullOrEmpty(salt))
                throw new ArgumentException("SaveId.Derive needs at least one feature and a salt");
            byte[] digest;
            using (var hmac = new HMACSHA256(Encoding.UTF8.GetBytes(salt))) digest = hmac.ComputeHash(Message(features));
            var sb = new StringBuilder();
            int buffer = 0, bits = 0;
            for (int i = 0; i < 16; i++)
            {
                buffer = (buffer << 8) | digest[i];
                bits += 8;
                while (bits >= 5)
                {
                    sb.Append(Base32[(buffer >> (bits - 5)) & 31]);
                    bits -= 5;
                }
            }
            if (bits > 0) sb.Append(Base32[(buffer << (5 - bits)) & 31]);
            return sb.ToString();
        }
    }
}
