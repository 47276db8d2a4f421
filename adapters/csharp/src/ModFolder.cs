// What a mod keeps between runs: the per-install salt of saveId, the key it connects with and the
// server's address. They live where the game's mod updates do not reach (SMAPI replaces a mod's
// folder when it is updated, and a new salt changes every saveId): a KeepStore the mod names
// (SMAPI: helper.Data's global data; ONI: mods/config/<name>). Files an older version left in the
// mod's own folder are moved there on first run.
using System;
using System.Collections.Generic;
using System.IO;
using System.Text;

namespace XiaoTangYuan.Adapter
{
    /// <summary>Named text values that outlive the mod's updates. Names are slugs
    /// (letters, digits, '-'), as SMAPI's global data keys must be.</summary>
    public interface IKeepStore
    {
        /// <summary>The value kept under name, or null.</summary>
        string Read(string name);
        /// <summary>Keep text under name, replacing it whole; null forgets it.</summary>
        void Write(string name, string text);
    }

    /// <summary>A folder outside the mod's own, one file per name (name + ".txt"), each replaced
    /// whole. ONI: Path.Combine(KMod.Manager.GetDirectory(), "config", "XiaoTangYuan").</summary>
    public sealed class FolderStore : IKeepStore
    {
        public readonly string Directory;

        public FolderStore(string directory) { Directory = directory; }

        private string File(string name) { return Path.Combine(Directory, name + ".txt"); }

        public string Read(string name) { return ModFolder.ReadText(File(name)); }

        public void Write(string name, string text)
        {
            if (text == null) { System.IO.File.Delete(File(name)); return; }
            System.IO.Directory.CreateDirectory(Directory);
            ModFolder.WriteText(File(name), text);
        }
    }

    /// <summary>A store made of the game's own calls. SMAPI:
    /// new DelegateStore(name => Read(helper.Data.ReadGlobalData&lt;Kept&gt;(name)),
    /// (name, text) => helper.Data.WriteGlobalData(name, text == null ? null : new Kept { Value = text })).</summary>
    public sealed class DelegateStore : IKeepStore
    {
        private readonly Func<string, string> read;
        private readonly Action<string, string> write;

        public DelegateStore(Func<string, string> read, Action<string, string> write)
        {
            this.read = read;
            this.write = write;
        }

        public string Read(string name) { return read(name); }
        public void Write(string name, string text) { write(name, text); }
    }

    public sealed class ModFolder
    {
        /// <summary>The names in the KeepStore.</summary>
        public const string SaltName = "xiaotangyuan-salt", KeyName = "xiaotangyuan-key", UrlName = "xiaotangyuan-url";
        /// <summary>This install's random id (InstallId()), beside the key in the KeepStore.</summary>
        public const string InstallName = "xiaotangyuan-install";
        /// <summary>The files an older version kept in the mod's own folder (moved to the store on first run);
        /// the player may still write UrlFile there.</summary>
        public const string SaltFile = SaltName + ".txt", KeyFile = KeyName + ".txt", UrlFile = UrlName + ".txt";
        public const string DefaultUrl = "ws://127.0.0.1:8765/v1";

        /// <summary>The mod's own folder (SMAPI: helper.DirectoryPath; ONI: UserMod2.path): an update replaces it.</summary>
        public readonly string Directory;
        /// <summary>Where the salt, the key and the address are kept.</summary>
        public readonly IKeepStore Keep;
        /// <summary>What was moved out of the mod's folder into Keep by this constructor (names), for the mod's log.</summary>
        public readonly List<string> Moved = new List<string>();

        /// <summary>The mod's folder, and the folder outside it where the values are kept
        /// (ONI: Path.Combine(KMod.Manager.GetDirectory(), "config", "XiaoTangYuan")).</summary>
        public ModFolder(string directory, string keepDirectory) : this(directory, new FolderStore(keepDirectory)) { }

        /// <summary>The mod's folder, and the store the values are kept in (SMAPI: a DelegateStore over
        /// helper.Data.ReadGlobalData / WriteGlobalData). Moves an older version's files there.</summary>
        public ModFolder(string directory, IKeepStore keep)
        {
            Directory = directory;
            Keep = keep;
            // The player's own address file stays where the player wrote it (a copy is kept too).
            Migrate(SaltFile, SaltName, true);
            Migrate(KeyFile, KeyName, true);
            Migrate(UrlFile, UrlName, false);
        }

        private void Migrate(string file, string name, bool remove)
        {
            var folder = Keep as FolderStore;
            if (folder != null && Path.GetFullPath(folder.Directory) == Path.GetFullPath(Directory)) return; // kept in place
            string path = Path.Combine(Directory, file);
            string old = ReadText(path);
            if (string.IsNullOrEmpty(old)) return;
            string kept = Keep.Read(name);
            if (string.IsNullOrEmpty(kept))
            {
                Keep.Write(name, old);
                kept = Keep.Read(name);
                if (remove) Moved.Add(name);
            }
            // Removed only once the store holds the same value: a store that already had another
            // (another copy of the mod wrote it first) wins, and the old file is left alone.
            if (remove && kept == old) File.Delete(path);
        }

        internal static string ReadText(string file)
        {
            return File.Exists(file) ? File.ReadAllText(file, Encoding.UTF8).Trim() : null;
        }

        /// <summary>Write a file, replacing it whole (a crash leaves the old one).</summary>
        internal static void WriteText(string file, string text)
        {
            string tmp = file + ".tmp";
            File.WriteAllText(tmp, text, new UTF8Encoding(false));
            if (File.Exists(file)) File.Delete(file);
            File.Move(tmp, file);
        }

        /// <summary>The salt made on first run and kept (never sent).</summary>
        public string Salt()
        {
            string salt = Keep.Read(SaltName);
            if (string.IsNullOrEmpty(salt))
            {
                salt = SaveId.NewSalt();
                Keep.Write(SaltName, salt);
            }
            return salt;
        }

        /// <summary>The key this mod keeps, else the server's adapter token file (the server's data
        /// folder: %LOCALAPPDATA%\XiaoTangYuan\token on Windows), else null.</summary>
        public string Key()
        {
            string key = Keep.Read(KeyName);
            if (!string.IsNullOrEmpty(key)) return key;
            string token = Path.Combine(ServerDataFolder(), "token");
            return File.Exists(token) ? File.ReadAllText(token).Trim() : null;
        }

        /// <summary>This install's id (protocol/v1.md "Keys per install"): 32 random hex digits made
        /// on first run and kept in the KeepStore; pass it as XtyClient.InstallId. The server keeps a
        /// key per install, so two installs with their own stores (two Steam accounts, two SMAPI
        /// folders) never replace each other's key; copies sharing one store share this id and one
        /// key. Random, never derived from a path, a user name or an account id.</summary>
        public string InstallId()
        {
            string id = Keep.Read(InstallName);
            if (!IsInstallId(id))
            {
                id = Guid.NewGuid().ToString("N"); // random (version 4): 32 hex digits
                Keep.Write(InstallName, id);
            }
            return id;
        }

        private static bool IsInstallId(string id)
        {
            if (id == null || id.Length != 32) return false;
            foreach (char c in id)
                if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
            return true;
        }

        /// <summary>Keep the key pairing gave (XtyClient.OnPaired): Key() returns it from then on,
        /// to every copy of the mod that shares this store.</summary>
        public void SaveKey(string key) { Keep.Write(KeyName, key); }

        /// <summary>Forget a key the server refused (XtyClient.OnKeyRefused gives it): the next start
        /// pairs again. Only that key: one another copy of the mod kept since then stays.</summary>
        public void ForgetKey(string refused)
        {
            string kept = Keep.Read(KeyName);
            if (kept != null && (refused == null || kept == refused)) Keep.Write(KeyName, null);
        }

        /// <summary>The server's address: xiaotangyuan-url.txt in the mod's folder when the player
        /// wrote one, else the one kept (an update removed the file), else the url of the server
        /// running now (server.json in its data folder: a server started with --port is found),
        /// else the default. Read it when a save loads, not once per game.</summary>
        public Uri Url()
        {
            string url = ReadText(Path.Combine(Directory, UrlFile));
            if (!string.IsNullOrEmpty(url) && url != Keep.Read(UrlName)) Keep.Write(UrlName, url);
            if (string.IsNullOrEmpty(url)) url = Keep.Read(UrlName);
            if (string.IsNullOrEmpty(url)) url = RunningServerUrl();
            return new Uri(string.IsNullOrEmpty(url) ? DefaultUrl : url);
        }

        /// <summary>The "url" of server.json, which a running xtyserver writes in its data folder; null
        /// when no server runs there (or the file is unreadable).</summary>
        public static string RunningServerUrl()
        {
            try
            {
                string text = ReadText(Path.Combine(ServerDataFolder(), "server.json"));
                var file = text == null ? null : Json.Parse(text) as JsonObject;
                string url = file == null ? null : file.Str("url");
                return url != null && url.StartsWith("ws://", StringComparison.Ordinal) ? url : null;
            }
            catch (Exception) { return null; } // half-written or foreign: the default address then
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
