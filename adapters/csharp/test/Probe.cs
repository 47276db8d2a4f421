// Test driver for the C# client (tests/adapter/test_csharp_client.py): a game's main thread as
// Unity has it (a single-threaded SynchronizationContext that runs only when the loop turns),
// which drains client.Poll() on every tick.
//   mono Probe.exe json                                   (prints a frame's JSON)
//   mono Probe.exe session URL TOKEN [--throw] [--voice] [--until-closed] [--chats N]
using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using XiaoTangYuan.Adapter;

/// <summary>Unity's main thread: posted continuations run only when the game loop turns.</summary>
public sealed class GameLoopContext : SynchronizationContext
{
    private readonly BlockingCollection<KeyValuePair<SendOrPostCallback, object>> queue = new BlockingCollection<KeyValuePair<SendOrPostCallback, object>>();
    public override void Post(SendOrPostCallback d, object state) { queue.Add(new KeyValuePair<SendOrPostCallback, object>(d, state)); }
    public void RunPending()
    {
        KeyValuePair<SendOrPostCallback, object> item;
        while (queue.TryTake(out item)) item.Key(item.Value);
    }
}

public static class Probe
{
    private static int mainThread;

    private static void Say(string line) { Console.WriteLine(line); Console.Out.Flush(); }

    public static int Main(string[] args)
    {
        if (args[0] == "json")
        {
            var frame = new JsonObject()
                .Add("float", 72.3f).Add("double", 72.3).Add("whole", 45f)
                .Add("uint", 4000000000u).Add("ulong", 18446744073709551615UL).Add("ushort", (ushort)7)
                .Add("dict", new Dictionary<string, object> { { "name", "Pip" }, { "hearts", 3u }, { "tags", new[] { "pet" } } })
                .Add("strings", new Dictionary<string, string> { { "season", "spring" } });
            Say(Json.Write(frame));
            Budget.CheckContext(new JsonObject().Add("schemaVersion", 1L).Add("player", new Dictionary<string, object> { { "health", 90u } }), "modelContext");
            Say("budget ok");
            return 0;
        }
        mainThread = Thread.CurrentThread.ManagedThreadId;
        var loop = new GameLoopContext();
        SynchronizationContext.SetSynchronizationContext(loop);
        var flags = new HashSet<string>(args);
        var client = new XtyClient(new Uri(args[1]), args[2],
            new JsonObject().Add("gameId", "stardew-valley").Add("saveId", "5qerlvpodf25qawmxprrvkd4qe").Add("saveName", "Sunny Farm"),
            "XTY Probe", "0.1.0", "Asia/Shanghai");
        client.BackoffBase = 0.2;
        bool offMain = false, threw = false;
        client.OnDelta = (id, text) =>
        {
            if (Thread.CurrentThread.ManagedThreadId != mainThread) offMain = true;
            Say("<- chat.delta " + id + " " + text);
            if (flags.Contains("--throw")) { threw = true; throw new InvalidOperationException("the mod's bubble broke"); }
        };
        client.OnChatEnd = r => Say("chat end " + r.Id + " " + (r.Done ? "done" : r.Code));
        client.OnLog = line =>
        {
            if (Thread.CurrentThread.ManagedThreadId != mainThread) offMain = true;
            if (line.StartsWith("closed ", StringComparison.Ordinal)) closedSeen = true;
            Say("[xty] " + line);
        };

        // What a Unity mod does in Start(): block on the connect (a deadlock without ConfigureAwait(false)).
        if (!client.ConnectAsync().Wait(TimeSpan.FromSeconds(20))) { Say("deadlock: ConnectAsync().Wait() never returned"); return 2; }
        Say("connected");
        int chats = flags.Contains("--chats") ? int.Parse(args[Array.IndexOf(args, "--chats") + 1]) : 0;
        var work = Play(client, chats, flags.Contains("--voice"));
        var deadline = DateTime.UtcNow.AddSeconds(90);
        // The game loop: every tick runs what was posted to the main thread, then drains the client.
        while (DateTime.UtcNow < deadline)
        {
            loop.RunPending();
            client.Poll();
            if (work.IsCompleted && !flags.Contains("--until-closed")) break;
            if (work.IsCompleted && closedSeen) break;
            Thread.Sleep(10);
        }
        loop.RunPending();
        client.Poll();
        Say("callbacks off the main thread: " + offMain.ToString().ToLowerInvariant());
        if (flags.Contains("--throw")) Say("a callback threw: " + threw.ToString().ToLowerInvariant());
        if (work.IsFaulted) { Say("failed: " + work.Exception.GetBaseException().Message); return 1; }
        if (!flags.Contains("--until-closed")) client.CloseAsync().Wait(TimeSpan.FromSeconds(10));
        Say("exit");
        return 0;
    }

    private static volatile bool closedSeen;

    private static async Task Play(XtyClient client, int chats, bool voice)
    {
        for (int i = 1; i <= chats; i++)
        {
            var r = await client.ChatAsync("第" + i + "个问题：今天适合钓鱼吗？", null, null, null, voice ? "voice" : "text");
            Say("chat " + i + " " + (r.Done ? "done " + r.Text : "error " + r.Code) + " on main thread " + (Thread.CurrentThread.ManagedThreadId == mainThread).ToString().ToLowerInvariant());
        }
    }
}
