// An example mod skeleton's session against xtyserver: what a Stardew (SMAPI) or ONI mod does.
//   mono XtyExample.exe --url ws://127.0.0.1:8765/v1 --token-file PATH --png shot.png
//   mono XtyExample.exe --project observation.json "question" game     (prints the modelContext)
//   mono XtyExample.exe --saveid SALT key=value ...                    (prints the saveId)
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Threading.Tasks;
using XiaoTangYuan.Adapter;

public static class Program
{
    // What the mod reads from the game each time: the full observation; Projection cuts it per question.
    private const string Observation = @"{
      ""world"": {""location"": ""Farm"", ""time"": ""08:10"", ""season"": ""spring"", ""weather"": ""sunny"", ""day"": 45.0},
      ""player"": {""health"": 100, ""stamina"": 72, ""status"": [""well-fed""], ""heldItem"": ""Fishing Rod""},
      ""focus"": {""kind"": ""water"", ""name"": ""farm pond"", ""reachable"": true},
      ""nearby"": [{""kind"": ""npc"", ""name"": ""Abigail"", ""distance"": 4}, {""kind"": ""crop"", ""name"": ""Parsnip"", ""distance"": 2}],
      ""relevantItems"": [{""name"": ""Bait"", ""count"": 18}],
      ""inventory"": [{""name"": ""Fishing Rod"", ""count"": 1, ""tags"": [""fishing""]}, {""name"": ""Parsnip Seeds"", ""count"": 15}],
      ""ui"": {""busy"": false}
    }";

    public static int Main(string[] args)
    {
        try
        {
            if (args.Length >= 4 && args[0] == "--project")
            {
                var obs = (JsonObject)Json.Parse(File.ReadAllText(args[1]));
                Console.WriteLine(Json.Write(Projection.Project(obs, args[2], args[3])));
                return 0;
            }
            if (args.Length >= 2 && args[0] == "--saveid")
            {
                var features = args.Skip(2).ToDictionary(a => a.Split('=')[0], a => a.Substring(a.IndexOf('=') + 1));
                Console.WriteLine(SaveId.Derive(features, args[1]));
                return 0;
            }
            return Run(Arg(args, "--url"), File.ReadAllText(Arg(args, "--token-file")).Trim(), Arg(args, "--png")).GetAwaiter().GetResult();
        }
        catch (Exception e)
        {
            Console.WriteLine("failed: " + e.Message);
            return 1;
        }
    }

    private static string Arg(string[] args, string name)
    {
        int i = Array.IndexOf(args, name);
        if (i < 0 || i + 1 >= args.Length) throw new ArgumentException("missing " + name);
        return args[i + 1];
    }

    private static async Task<int> Run(string url, string token, string pngPath)
    {
        // The salt is made once per install and kept in the mod's config; fixed here for the output.
        string salt = "00112233445566778899aabbccddeeff";
        var features = new Dictionary<string, string> { { "farm", "Sunny Farm" }, { "created", "1714700000" }, { "seed", "42" } };
        string saveId = SaveId.Derive(features, salt);
        Console.WriteLine("saveId " + saveId);
        var identity = new JsonObject().Add("gameId", "stardew-valley").Add("saveId", saveId).Add("saveName", "Sunny Farm");
        using (var client = new XtyClient(new Uri(url), token, identity, "XTY Stardew", "0.1.0", "Asia/Shanghai"))
        {
            client.OnDelta = (id, text) => Console.WriteLine("<- chat.delta " + id + " " + text);
            client.OnLog = line => Console.Error.WriteLine("[xty] " + line);
            // A console program has no game tick: this loop stands for it (a mod calls Poll() from
            // SMAPI's UpdateTicked or Unity's Update; the callbacks run on that thread).
            var ticking = new System.Threading.CancellationTokenSource();
            var tick = Task.Run(async () => { while (!ticking.IsCancellationRequested) { client.Poll(); await Task.Delay(10); } });
            await client.ConnectAsync();
            Console.WriteLine("<- server.hello heartbeatMs " + client.ServerHello["heartbeatMs"]);

            var observation = (JsonObject)Json.Parse(Observation);
            observation["capturedAt"] = DateTime.UtcNow.ToString("yyyy-MM-ddTHH:mm:ss.fffZ");
            var state = Projection.Project(observation, "", "stardew-valley");
            await client.UpdateStateAsync(state);
            Console.WriteLine("-> state.update " + Json.Utf8Bytes(state) + " bytes");
            var probe = await client.RequestAsync(new JsonObject().Add("type", "stats.get"));
            Console.WriteLine("<- " + probe.Str("type") + " (the state.update was accepted)");

            string question = "今天适合钓鱼吗？";
            var context = Projection.Project(observation, question, "stardew-valley");
            Console.WriteLine("-> chat.send " + question + " topics " + string.Join(",", Projection.Topics(question, "stardew-valley").ToArray())
                + " modelContext " + Json.Write(context));
            var reply = await client.ChatAsync(question, File.ReadAllBytes(pngPath), "image/png", context);
            Console.WriteLine(reply.Done
                ? "<- chat.done " + reply.Deltas.Count + " deltas, context " + reply.Context + ", imageSent " + reply.ImageSent.ToString().ToLowerInvariant() + ": " + reply.Text
                : "<- chat.error " + reply.Code + " " + reply.Message);

            // A modelContext over the 6 KiB budget: the local pre-check refuses it before sending...
            // (every string and list is within its limit; 13 names of 200 CJK chars are ~7.9 KB)
            var big = new JsonObject().Add("schemaVersion", 1L)
                .Add("nearby", Enumerable.Range(0, 5).Select(i => (object)new JsonObject().Add("name", new string('怪', 199) + i)).ToList())
                .Add("relevantItems", Enumerable.Range(0, 8).Select(i => (object)new JsonObject().Add("name", new string('鱼', 199) + i)).ToList());
            try { await client.UpdateStateAsync(big); }
            catch (XtyRefusedException e) { Console.WriteLine("refused locally: " + e.Code + " " + string.Join(",", e.Fields.ToArray())); }
            // ...and the server refuses it too when sent anyway.
            var error = await client.RequestAsync(new JsonObject().Add("type", "state.update").Add("id", "too-big").Add("modelContext", big));
            Console.WriteLine("<- " + error.Str("type") + " " + error.Str("code") + " " + Json.Write(error["fields"]));

            await client.CloseAsync();
            ticking.Cancel();
            await tick;
            client.Poll();
            Console.WriteLine("closed");
            return reply.Done && error.Str("code") == "budget_exceeded" ? 0 : 1;
        }
    }
}
