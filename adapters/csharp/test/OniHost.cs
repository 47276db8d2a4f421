// The game's side of examples/oni in tests: ONI's mod loading in miniature, over the stand-ins
// (examples/standins/Oni.cs, compiled into this host). It loads the mod DLL, calls OnLoad (the
// mods folder is MODS_DIR, so mods/config is MODS_DIR/config), then loads each colony in turn
// (SaveGame.Instance, its worldgen seed in CustomGameSettings), runs Unity's frame loop (the
// driver's Update() 60 times a second on its one main thread), asks one question once the mod's
// client said hello, and leaves the colony once the reply came (the echo model's: it ends with
// the question).
//   mono OniHost.exe XtyOni.dll MOD_FOLDER MODS_DIR "question" NAME:SEED [NAME:SEED ...]
using System;
using System.Linq;
using System.Reflection;
using System.Threading;

public static class OniHost
{
    public static int Main(string[] args)
    {
        Environment.SetEnvironmentVariable("ONI_MODS", args[2]);
        var type = Assembly.LoadFrom(args[0]).GetTypes().Single(t => typeof(KMod.UserMod2).IsAssignableFrom(t));
        var mod = (KMod.UserMod2)Activator.CreateInstance(type);
        mod.path = args[1];
        mod.OnLoad(new HarmonyLib.Harmony("xiaotangyuan.oni"));
        var driver = UnityEngine.GameObject.All.SelectMany(o => o.Components).Single(c => c.GetType().Name == "XtyDriver");
        const BindingFlags any = BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic;
        var update = driver.GetType().GetMethod("Update", any);
        var clientField = driver.GetType().GetField("client", any);
        var replyField = driver.GetType().GetField("reply", any);
        string question = args[3];
        GameClock.Instance = new GameClock { cycle = 12 };
        foreach (var colony in args.Skip(4))
        {
            string name = colony.Substring(0, colony.LastIndexOf(':')), seed = colony.Substring(colony.LastIndexOf(':') + 1);
            CustomGameSettings.Instance = new CustomGameSettings();
            CustomGameSettings.Instance.Levels["WorldgenSeed"] = seed;
            SaveGame.Instance = new SaveGame { BaseName = name };
            bool asked = false, answered = false;
            var deadline = DateTime.UtcNow.AddSeconds(60);
            while (!answered && DateTime.UtcNow < deadline)
            {
                update.Invoke(driver, null);
                var client = clientField.GetValue(driver);
                bool open = client != null && client.GetType().GetProperty("ServerHello").GetValue(client, null) != null;
                if (open && !asked)
                {
                    asked = true;
                    driver.GetType().GetMethod("Ask").Invoke(driver, new object[] { question });
                }
                string reply = (string)replyField.GetValue(driver);
                answered = asked && reply.EndsWith(question, StringComparison.Ordinal);
                Thread.Sleep(16);
            }
            Console.WriteLine((answered ? "answered in " : "no reply in ") + name + " (seed " + seed + ")");
            if (!answered) return 1;
            SaveGame.Instance = null;   // back to the main menu: the mod closes its client
            for (int i = 0; i < 30; i++) { update.Invoke(driver, null); Thread.Sleep(16); }
        }
        return 0;
    }
}
