// Test driver for the C# client (tests/adapter/test_csharp_client.py): a game's main thread as
// Unity has it (a single-threaded SynchronizationContext that runs only when the loop turns),
// which drains client.Poll() on every tick.
//   mono Probe.exe json                                   (prints a frame's JSON)
//   mono Probe.exe keep MODDIR KEEPDIR                    (ModFolder over a FolderStore: what moved, the saveId)
//   mono Probe.exe gameloop URL TOKEN TICKS               (60 ticks a second; counts the socket calls made on the game thread)
//   mono Probe.exe session URL TOKEN [--throw] [--voice] [--until-closed] [--chats N] [--pair DIR [--keep KEEP]]
//   mono Probe.exe session URL TOKEN --control FILE [--typing-clock]   (driven by a test: Controlled)
//       (TOKEN "" with --pair DIR: the mod's folder DIR; the key kept in KEEP (default DIR), else
//       pair first and keep the key there, as a mod keeps it where its updates do not reach)
using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Net.WebSockets;
using System.Threading;
using System.Threading.Tasks;
using XiaoTangYuan.Adapter;

/// <summary>The real ClientWebSocket, with the thread of every call into it written down: the test
/// counts the calls the game's thread made (connect, send, receive, close, abort, dispose).</summary>
public sealed class RecordingWebSocket : WebSocket
{
    public static readonly ConcurrentQueue<KeyValuePair<string, int>> Calls = new ConcurrentQueue<KeyValuePair<string, int>>();
    private readonly WebSocket inner;

    private RecordingWebSocket(WebSocket inner) { this.inner = inner; }

    private static void Note(string what) { Calls.Enqueue(new KeyValuePair<string, int>(what, Thread.CurrentThread.ManagedThreadId)); }

    public static async Task<WebSocket> Open(Uri url, CancellationToken cancel)
    {
        Note("connect");
        return new RecordingWebSocket(await XtyClient.OpenWebSocket(url, cancel).ConfigureAwait(false));
    }

    public override WebSocketCloseStatus? CloseStatus { get { return inner.CloseStatus; } }
    public override string CloseStatusDescription { get { return inner.CloseStatusDescription; } }
    public override WebSocketState State { get { return inner.State; } }
    public override string SubProtocol { get { return inner.SubProtocol; } }
    public override void Abort() { Note("abort"); inner.Abort(); }
    public override void Dispose() { Note("dispose"); inner.Dispose(); }
    public override Task CloseAsync(WebSocketCloseStatus status, string description, CancellationToken cancel) { Note("close"); return inner.CloseAsync(status, description, cancel); }
    public override Task CloseOutputAsync(WebSocketCloseStatus status, string description, CancellationToken cancel) { Note("close"); return inner.CloseOutputAsync(status, description, cancel); }
    public override Task<WebSocketReceiveResult> ReceiveAsync(ArraySegment<byte> buffer, CancellationToken cancel) { Note("receive"); return inner.ReceiveAsync(buffer, cancel); }
    public override Task SendAsync(ArraySegment<byte> buffer, WebSocketMessageType type, bool end, CancellationToken cancel)
    {
        Note("send");
        Written.Enqueue(System.Text.Encoding.UTF8.GetString(buffer.Array, buffer.Offset, buffer.Count));
        var stall = Stall;
        if (stall == null) return inner.SendAsync(buffer, type, end, cancel);
        Interlocked.Increment(ref Stalled);
        return stall.Task.ContinueWith(_ => inner.SendAsync(buffer, type, end, cancel)).Unwrap();
    }

    /// <summary>While set, every send waits for it: the network stalled (a full TCP window, a
    /// frozen server). Stalled counts the sends that waited; Written keeps every send's text in order.</summary>
    public static volatile TaskCompletionSource<bool> Stall;
    public static int Stalled;
    public static readonly ConcurrentQueue<string> Written = new ConcurrentQueue<string>();
}

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
        if (args[0] == "keep")
        {
            var kept = new ModFolder(args[1], args[2]);
            Say("moved: " + string.Join(",", kept.Moved));
            Say("saveId: " + SaveId.Derive(new Dictionary<string, string> { { "colony", "Bubbles" }, { "seed", "1845874684" } }, kept.Salt()));
            Say("key: " + (kept.Key() ?? "none"));
            Say("url: " + kept.Url());
            return 0;
        }
        mainThread = Thread.CurrentThread.ManagedThreadId;
        var loop = new GameLoopContext();
        SynchronizationContext.SetSynchronizationContext(loop);
        var flags = new HashSet<string>(args);
        // TOKEN "" with --pair DIR: the key kept from an earlier pairing, as a mod's Start() reads it.
        ModFolder folder = null;
        if (flags.Contains("--pair"))
        {
            string dir = Option(args, "--pair", ".");
            folder = new ModFolder(dir, Option(args, "--keep", dir));
        }
        string token = args[2] == "" && folder != null ? folder.Key() : args[2];
        var client = new XtyClient(new Uri(args[1]), token,
            new JsonObject().Add("gameId", "stardew-valley").Add("saveId", Option(args, "--save", "5qerlvpodf25qawmxprrvkd4qe")).Add("saveName", Option(args, "--save-name", "Sunny Farm")),
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

        if (folder != null)
        {
            client.OnPairCode = (code, seconds) => Say("pair code " + code + " for " + seconds + " s");
            client.OnPaired = key => { folder.SaveKey(key); Say("paired, key kept"); };
            client.KeySource = folder.Key;
            client.InstallId = folder.InstallId();
            client.OnKeyRefused = refused => { folder.ForgetKey(refused); Say("key refused, forgotten"); };
        }
        if (args[0] == "gameloop") return GameLoop(client, loop, int.Parse(args[3]));
        if (args[0] == "outbox") return Outbox(client, loop);
        if (flags.Contains("--control")) return Controlled(client, loop, args[Array.IndexOf(args, "--control") + 1], flags.Contains("--typing-clock"));
        // What a Unity mod does in Start(): block on the connect (a deadlock without ConfigureAwait(false)).
        try
        {
            if (!client.ConnectAsync().Wait(TimeSpan.FromSeconds(20))) { Say("deadlock: ConnectAsync().Wait() never returned"); return 2; }
        }
        catch (AggregateException e)
        {
            client.Poll();
            var refused = e.GetBaseException() as XtyRefusedException;
            Say(refused != null ? "refused: " + refused.Code : "failed: " + e.GetBaseException().Message);
            return 1;
        }
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

    // A game at 60 ticks a second, as SMAPI's UpdateTicked runs: Start() on the first tick, Poll()
    // on every tick, a state update every sixth tick once connected (10 a second), a question
    // every second, a stats request and a cancel now and then, all from the game's thread and
    // never awaited there. Prints how many socket calls the game's thread made (the test wants 0),
    // and, for the record only, the longest time a tick spent in the client's calls.
    private static int GameLoop(XtyClient client, GameLoopContext loop, int ticks)
    {
        client.SocketFactory = RecordingWebSocket.Open;
        client.OnChatEnd = r => Say("chat end " + (r.Done ? "done" : r.Code));
        var context = new JsonObject().Add("schemaVersion", 1L).Add("capturedAt", "2026-05-01T08:10:00Z")
            .Add("world", new JsonObject().Add("location", "Farm").Add("time", "08:10").Add("day", 5L));
        int states = 0, chats = 0, failed = 0;
        long worst = 0, firstState = -1;
        int worstTick = 0;
        var clock = new Stopwatch();
        client.Start();
        for (int tick = 1; tick <= ticks; tick++)
        {
            loop.RunPending();
            clock.Restart();
            client.Poll();
            if (client.ServerHello != null)
            {
                var calls = new List<Task>();
                if (tick % 6 == 0) { calls.Add(client.UpdateStateAsync(context)); states++; }
                if (tick % 60 == 30) { calls.Add(client.ChatAsync("第" + (++chats) + "个问题", null, null, context)); }
                if (tick % 60 == 45) calls.Add(client.RequestAsync(new JsonObject().Add("type", "stats.get")));
                if (tick % 120 == 50) calls.Add(client.CancelAsync("chat-none"));
                foreach (var call in calls) call.ContinueWith(t => Interlocked.Increment(ref failed), TaskContinuationOptions.OnlyOnFaulted);
            }
            clock.Stop();
            if (firstState < 0 && states == 1) firstState = clock.ElapsedTicks;
            if (clock.ElapsedTicks > worst) { worst = clock.ElapsedTicks; worstTick = tick; }
            Thread.Sleep(16);
        }
        loop.RunPending();
        client.Poll();
        int onGame = 0, total = 0, sends = 0;
        var kinds = new SortedSet<string>();
        foreach (var call in RecordingWebSocket.Calls)
        {
            total++;
            if (call.Key == "send") sends++;
            if (call.Value == mainThread) { onGame++; kinds.Add(call.Key); }
        }
        Say("state updates " + states + ", chats " + chats + ", calls failed " + failed);
        Say("socket calls " + total + ", sends " + sends + ", on the game thread " + onGame + " (" + string.Join(",", kinds) + ")");
        Say("longest tick in the client's calls (record only) " + (worst * 1000.0 / Stopwatch.Frequency).ToString("0.00", System.Globalization.CultureInfo.InvariantCulture) + " ms at tick " + worstTick);
        Say("first state update's tick (record only) " + (firstState * 1000.0 / Stopwatch.Frequency).ToString("0.00", System.Globalization.CultureInfo.InvariantCulture) + " ms");
        var closed = client.CloseAsync();
        loop.RunPending();
        closed.Wait(TimeSpan.FromSeconds(10));
        onGame = 0;
        foreach (var call in RecordingWebSocket.Calls) if (call.Value == mainThread) onGame++;
        Say("after close, on the game thread " + onGame);
        return 0;
    }

    // The bounded outbox at its edge, on the game's thread: the network stalls with one state
    // update on the wire; MaxQueuedFrames more are queued and the next is refused at once
    // (send_queue_full), every call returning while nothing moves. The network comes back: the
    // queued ones are written in order, and the outbox takes frames again.
    private static int Outbox(XtyClient client, GameLoopContext loop)
    {
        client.SocketFactory = RecordingWebSocket.Open;
        client.Start();
        Func<long, JsonObject> context = day => new JsonObject().Add("schemaVersion", 1L).Add("capturedAt", "2026-05-01T08:10:00Z")
            .Add("world", new JsonObject().Add("location", "Farm").Add("time", "08:10").Add("day", day));
        var deadline = DateTime.UtcNow.AddSeconds(60);
        Func<Func<bool>, bool> tickUntil = done =>
        {
            while (!done())
            {
                if (DateTime.UtcNow > deadline) return false;
                loop.RunPending();
                client.Poll();
                Thread.Sleep(16);
            }
            return true;
        };
        if (!tickUntil(() => client.ServerHello != null)) { Say("no session"); return 2; }
        RecordingWebSocket.Stall = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        var calls = new List<Task> { client.UpdateStateAsync(context(0)) };
        if (!tickUntil(() => Volatile.Read(ref RecordingWebSocket.Stalled) == 1)) { Say("nothing reached the wire"); return 2; }
        // One tick of the game: MaxQueuedFrames + 1 calls while the first waits on the wire.
        int onGameThread = 0;
        for (long day = 1; day <= client.MaxQueuedFrames + 1; day++)
        {
            calls.Add(client.UpdateStateAsync(context(day)));
            if (Thread.CurrentThread.ManagedThreadId == mainThread) onGameThread++;
        }
        int pending = 0, refused = 0;
        string code = "";
        foreach (var call in calls)
        {
            if (!call.IsCompleted) pending++;
            else if (call.IsFaulted)
            {
                refused++;
                var e = call.Exception.GetBaseException() as XtyRefusedException;
                code = e != null ? e.Code + (e.Local ? " local" : "") : call.Exception.GetBaseException().GetType().Name;
            }
        }
        Say("calls on the game thread " + (onGameThread + 1) + ", waiting " + pending + ", refused " + refused + " " + code
            + ", on the wire " + Volatile.Read(ref RecordingWebSocket.Stalled));
        RecordingWebSocket.Stall.SetResult(true);
        RecordingWebSocket.Stall = null;
        var accepted = calls.GetRange(0, pending);
        if (!tickUntil(() => accepted.TrueForAll(t => t.IsCompleted))) { Say("the queued frames never went out"); return 2; }
        int written = accepted.FindAll(t => t.Status == TaskStatus.RanToCompletion).Count;
        var days = new List<string>();
        foreach (var text in RecordingWebSocket.Written)
        {
            var frame = Json.Parse(text) as JsonObject;
            if (frame != null && frame.Str("type") == "state.update")
                days.Add(Convert.ToString(((JsonObject)((JsonObject)frame["modelContext"])["world"])["day"], System.Globalization.CultureInfo.InvariantCulture));
        }
        Say("written " + written + ", in order " + (string.Join(",", days) == string.Join(",", Enumerable.Range(0, written))).ToString().ToLowerInvariant());
        var again = client.UpdateStateAsync(context(99));
        if (!tickUntil(() => again.IsCompleted)) { Say("the outbox stayed shut"); return 2; }
        Say("after: " + again.Status);
        client.CloseAsync().Wait(TimeSpan.FromSeconds(10));
        return 0;
    }

    private static string Option(string[] args, string name, string fallback)
    {
        int i = Array.IndexOf(args, name);
        return i >= 0 && i + 1 < args.Length ? args[i + 1] : fallback;
    }

    // A game driven by a test: Start() (the game may come before the server), then lines appended
    // to the control file: "chat TEXT", "pause" / "resume" (Poll() stops: the client's own
    // heartbeat timer must not), "leave" (close, back to the title), "quit" (the process ends
    // with the connection open: no close frame).
    // The chat box, on the game's clock (with "--typing-clock": a clock only these commands move,
    // 16 ms a tick, Poll() on every tick): "keys MS TEXT" types TEXT a character every MS,
    // "phrases MS A|B|C" commits A, then AB, then ABC every MS (a Chinese IME), "idle MS" lets
    // time pass, "type TEXT" sets the draft at once; each hint Poll() queued is printed
    // ("hint at T: DRAFT"), and "count" prints the chat.typing frames written on the socket.
    private static int Controlled(XtyClient client, GameLoopContext loop, string control, bool typingClock)
    {
        client.OnChatEnd = r => Say("chat end " + (r.Done ? "done " + r.Text : r.Code));
        client.SocketFactory = RecordingWebSocket.Open;
        client.OnError = f => Say("refused " + f.Str("code") + " " + f.Str("message"));
        long now = 0;
        if (typingClock) client.Clock = () => Volatile.Read(ref now);
        int hints = 0;
        Action tick = () =>
        {
            loop.RunPending();
            client.Poll();
            if (client.TypingHintsSent == hints) return;
            hints = client.TypingHintsSent;
            Say("hint at " + client.Clock() + ": " + client.Typing.LastHint);
        };
        Action<long> idle = ms =>
        {
            for (long end = now + ms; now < end; )
            {
                Volatile.Write(ref now, Math.Min(now + 16, end));
                tick();
            }
        };
        client.Start();
        long offset = 0;
        var deadline = DateTime.UtcNow.AddSeconds(300);
        string seen = null;
        bool paused = false;
        while (DateTime.UtcNow < deadline)
        {
            if (!paused) tick();   // a paused game still turns its loop in Unity; here it stops
            else loop.RunPending();
            var hello = client.ServerHello;
            string session = hello == null ? null : hello.Str("sessionId");
            if (session != seen) { seen = session; if (session != null) Say("session open " + session); }
            foreach (var line in ReadFrom(control, ref offset))
            {
                Say("> " + line);
                if (line.StartsWith("chat ", StringComparison.Ordinal)) client.ChatAsync(line.Substring(5), null, null, null).ContinueWith(t => { }, TaskContinuationOptions.OnlyOnFaulted);
                else if (line.StartsWith("type ", StringComparison.Ordinal)) client.ChatTyping(line.Substring(5));
                else if (line.StartsWith("keys ", StringComparison.Ordinal) || line.StartsWith("phrases ", StringComparison.Ordinal))
                {
                    var parts = line.Split(new[] { ' ' }, 3);
                    long step = long.Parse(parts[1]);
                    var pieces = parts[0] == "keys" ? parts[2].Select(c => c.ToString()).ToArray() : parts[2].Split('|');
                    string draft = "";
                    foreach (var piece in pieces)
                    {
                        draft += piece;
                        client.ChatTyping(draft);
                        idle(step);
                    }
                    Say("typed " + draft);
                }
                else if (line.StartsWith("idle ", StringComparison.Ordinal)) { idle(long.Parse(line.Substring(5))); Say("idled"); }
                else if (line == "count")
                {
                    int frames = RecordingWebSocket.Written.Count(w => { var f = Json.Parse(w) as JsonObject; return f != null && f.Str("type") == "chat.typing"; });
                    Say("chat.typing frames " + frames);
                }
                else if (line == "pause") paused = true;
                else if (line == "resume") paused = false;
                else if (line == "leave") { client.CloseAsync().Wait(TimeSpan.FromSeconds(10)); client.Poll(); Say("left"); return 0; }
                else if (line == "quit") { Console.Out.Flush(); Environment.Exit(0); }
            }
            Thread.Sleep(10);
        }
        return 3;
    }

    private static List<string> ReadFrom(string path, ref long offset)
    {
        var lines = new List<string>();
        if (!System.IO.File.Exists(path)) return lines;
        using (var f = new System.IO.FileStream(path, System.IO.FileMode.Open, System.IO.FileAccess.Read, System.IO.FileShare.ReadWrite))
        {
            if (f.Length <= offset) return lines;
            f.Seek(offset, System.IO.SeekOrigin.Begin);
            var bytes = new byte[f.Length - offset];
            int n = f.Read(bytes, 0, bytes.Length);
            string text = System.Text.Encoding.UTF8.GetString(bytes, 0, n);
            int end = text.LastIndexOf('\n');
            if (end < 0) return lines;
            offset += System.Text.Encoding.UTF8.GetByteCount(text.Substring(0, end + 1));
            foreach (var line in text.Substring(0, end).Split('\n')) if (line.Length > 0) lines.Add(line);
        }
        return lines;
    }

    private static async Task Play(XtyClient client, int chats, bool voice)
    {
        for (int i = 1; i <= chats; i++)
        {
            var r = await client.ChatAsync("第" + i + "个问题：今天适合钓鱼吗？", null, null, null, voice ? "voice" : "text");
            Say("chat " + i + " " + (r.Done ? "done " + r.Text : "error " + r.Code) + " on main thread " + (Thread.CurrentThread.ManagedThreadId == mainThread).ToString().ToLowerInvariant());
        }
    }
}
