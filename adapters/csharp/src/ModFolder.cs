// What a mod keeps in its own config folder (SMAPI: helper.DirectoryPath; ONI: UserMod2.path):
// the per-install salt of saveId, the key it connects with, and the server's address.
using System;
using System.IO;
using System.Text;

namespace XiaoTangYuan.Adapter
{
    public sealed class ModFolder
    {
        public const string SaltFile = "xiaotangyuan-salt.txt";
        public const string KeyFile = "xiaotangyuan-key.txt";
        public const string UrlFile = "xiaotangyuan-url.txt";
        public const string DefaultUrl = "ws://127.0.0.1:8765/v1";

        public readonly string Directory;

        public ModFolder(string directory) { Directory = directory; }

        private string Read(string name)
        {
            string file = Path.Combine(Directory, name);
            return File.Exists(file) ? File.ReadAllText(file, Encoding.UTF8).Trim() : null;
        }

        /// <summary>Write a file only this mod reads, replacing it whole (a crash leaves the old one).</summary>
        public void Write(string name, string text)
        {
            string file = Path.Combine(Directory, name), tmp = file + ".tmp";
            File.WriteAllText(tmp, text, new UTF8Encoding(false));
            if (File.Exists(file)) File.Delete(file);
            File.Move(tmp, file);
        }

        /// <summary>The salt made on first run and kept (never sent).</summary>
        public string Salt()
        {
            string salt = Read(SaltFile);
            if (string.IsNullOrEmpty(salt))
            {
                salt = SaveId.NewSalt();
                Write(SaltFile, salt);
            }
            return salt;
        }

        /// <summary>The key this mod keeps, else the server's adapter token file (the server's data
        /// folder: %LOCALAPPDATA%\XiaoTangYuan\token on Windows), else null.</summary>
        public string Key()
        {
            string key = Read(KeyFile);
            if (!string.IsNullOrEmpty(key)) return key;
            string token = Path.Combine(ServerDataFolder(), "token");
            return File.Exists(token) ? File.ReadAllText(token).Trim() : null;
        }

        /// <summary>Keep the key pairing gave (XtyClient.OnPaired): Key() returns it from then on.</summary>
        public void SaveKey(string key) { Write(KeyFile, key); }

        /// <summary>Forget a key the server refused (XtyClient.OnKeyRefused): the next start pairs again.</summary>
        public void ForgetKey() { File.Delete(Path.Combine(Directory, KeyFile)); }

        /// <summary>The server's address: xiaotangyuan-url.txt when the player wrote one, else the default.</summary>
        public Uri Url()
        {
            string url = Read(UrlFile);
            return new Uri(string.IsNullOrEmpty(url) ? DefaultUrl : url);
        }

        /// <summary>Where xtyserver keeps its data by default on this OS.</summary>
        public static string ServerDataFolder()
        {
            var platform = Environment.OSVersion.Platform;
            if (platform == PlatformID.Win32NT)
                return Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.LocalApplicationData), "XiaoTangYuan");
            string home = Environment.GetEnvironmentVariable("HOME") ?? "";
            if (System.IO.Directory.Exists(Path.Combine(home, "Library", "Application Support")))
                return Path.Combine(home, "Library", "Application Support", "XiaoTangYuan");
            string xdg = Environment.GetEnvironmentVariable("XDG_DATA_HOME");
            return Path.Combine(string.IsNullOrEmpty(xdg) ? Path.Combine(home, ".local", "share") : xdg, "xiaotangyuan");
        }
    }
}
