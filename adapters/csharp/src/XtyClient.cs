// One protocol/v1 session over ClientWebSocket (v1.md "Transport", "Session"): hello, a receive
// loop that joins fragmented messages, heartbeats on a real-time timer (they go on while the game
// is paused), reconnect with backoff, replies matched by frame id.
// The game's thread never waits on the network: every call it makes only checks the frame and
// puts it in a bounded outbox, which the client's own sender task writes to the socket in order;
// connecting and closing run on the thread pool too. Callbacks never run on the client's own
// threads: they wait in a queue the game drains with Poll() on its main thread, each isolated,
// so a throwing one cannot end the session.
using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.IO;
using System.Net.WebSockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace XiaoTangYuan.Adapter
{
    /// <summary>The end of one chat turn: chat.done (Done true) or chat.error.</summary>
    public sealed class ChatResult
    {
        public string Id;
        public bool Done;
        public string Text;          // the whole reply (chat.done)
        public string Code;          // chat.error / error code
        public string Message;
        public string Context;       // "fresh", "stale", "dropped", "none"
        public bool ImageSent;
        public readonly List<string> Deltas = new List<string>();
    }

    public sealed partial class XtyClient : IDisposable
    {
        private static readonly HashSet<int> RetryCodes = new HashSet<int> { 1001, 1006, 1011, 1012, 1013, 4002, 4003 };

        private readonly Uri url;
        private string token;
        private readonly string adapterName, adapterVersion, timezone;
        private readonly SemaphoreSlim sendLock = new SemaphoreSlim(1, 1);
        private readonly object gate = new object();
        private readonly Dictionary<string, TaskCompletionSource<JsonObject>> requests = new Dictionary<string, TaskCompletionSource<JsonObject>>();
        private readonly Dictionary<string, KeyValuePair<ChatResult, TaskCompletionSource<ChatResult>>> chats = new Dictionary<string, KeyValuePair<ChatResult, TaskCompletionSource<ChatResult>>>();
        private WebSocket ws;
        private TaskCompletionSource<JsonObject> hello;
        private Timer heartbeat;
        private JsonObject identity;
        private JsonObject lastContext;
        private int nextId;
        private volatile bool closing;
        private Task receiving;
        private readonly ConcurrentQueue<Action> events = new ConcurrentQueue<Action>();
        private int queued, dropped;

        /// <summary>Called from Poll() with (chat id, text) for every chat.delta.</summary>
        public Action<string, string> OnDelta;
        /// <summary>Called from Poll() with the end of every chat (chat.done, chat.error, connection_lost).</summary>
        public Action<ChatResult> OnChatEnd;
        /// <summary>Called from Poll() with every error frame that answers no request (a refused state.update).</summary>
        public Action<JsonObject> OnError;
        /// <summary>Called from Poll() with a line of what the client does (connect, reconnect, close,
        /// a callback that threw).</summary>
        public Action<string> OnLog;
        /// <summary>Events kept for Poll() at most; past it the oldest are kept and new ones dropped
        /// (a game that never polls does not grow without bound).</summary>
        public int MaxQueuedEvents = 4096;
        /// <summary>Reconnect delays: Base * 2^n seconds, at most Cap, 20 % jitter; false: never reconnect.</summary>
        public bool Reconnect = true;
        public double BackoffBase = 1.0, BackoffCap = 30.0;
        public TimeSpan Timeout = TimeSpan.FromSeconds(15);
        /// <summary>Frames waiting for the sender task at most; one more is refused at once
        /// (XtyRefusedException "send_queue_full", Local), never waited for.</summary>
        public int MaxQueuedFrames = 64;
        /// <summary>Opens the WebSocket (default: a ClientWebSocket, no Origin header, no token in the
        /// URL). Tests wrap it to see which thread touches the socket.</summary>
        public Func<Uri, CancellationToken, Task<WebSocket>> SocketFactory = OpenWebSocket;

        /// <summary>The default SocketFactory: ClientWebSocket.ConnectAsync.</summary>
        public static async Task<WebSocket> OpenWebSocket(Uri url, CancellationToken cancel)
        {
            var socket = new ClientWebSocket();
            try { await socket.ConnectAsync(url, cancel).ConfigureAwait(false); }
            catch (Exception) { socket.Dispose(); throw; }
            return socket;
        }

        public JsonObject ServerHello { get; private set; }

        /// <param name="url">ws://127.0.0.1:PORT/v1</param>
        /// <param name="token">The adapter token (sent in adapter.hello, never in the URL).</param>
        /// <param name="identity">{gameId, saveId, saveName?}</param>
        public XtyClient(Uri url, string token, JsonObject identity, string adapterName, string adapterVersion, string timezone)
        {
            this.url = url;
            this.token = token;
            this.identity = identity;
            this.adapterName = adapterName;
            this.adapterVersion = adapterVersion;
            this.timezone = timezone;
        }

        private void Log(string line) { Post(() => { var f = OnLog; if (f != null) f(line); }); }

        private void Post(Action callback)
        {
            if (Interlocked.Increment(ref queued) > MaxQueuedEvents)
            {
                Interlocked.Decrement(ref queued);
                Interlocked.Increment(ref dropped);
                return;
            }
            events.Enqueue(callback);
        }

        /// <summary>Events dropped because the queue was full (Poll() was not called).</summary>
        public int DroppedEvents { get { return dropped; } }

        /// <summary>Run the queued callbacks (OnDelta, OnChatEnd, OnError, OnLog) on the calling
        /// thread: call it from the game's tick (SMAPI UpdateTicked, Unity Update). A callback that
        /// throws is reported to OnLog and the others still run. Returns how many ran. It first
        /// queues the typing hint that is due (ChatTyping).</summary>
        public int Poll(int max = int.MaxValue)
        {
            HintTyping();
            int ran = 0;
            Action callback;
            while (ran < max && events.TryDequeue(out callback))
            {
                Interlocked.Decrement(ref queued);
                ran++;
                try { callback(); }
                catch (Exception e)
                {
                    try { var f = OnLog; if (f != null) f("a callback threw " + e.GetType().Name + ": " + e.Message); }
                    catch (Exception) { } // the log callback itself threw: nothing left to tell
                }
            }
            return ran;
        }

        private string NextId(string kind) { return kind + "-" + Interlocked.Increment(ref nextId); }

        // -- connecting ---------------------------------------------------------------------

        /// <summary>Connect and say hello; throws XtyRefusedException when the hello is refused
        /// (a wrong token is "unauthorized", which a header token would hide behind a failed handshake).</summary>
        public Task ConnectAsync()
        {
            closing = false;
            // The TCP connect, the upgrade and the hello all happen off the calling (game) thread.
            return Task.Run(() => ConnectCore());
        }

        private async Task ConnectCore()
        {
            var warm = Task.Run(() => Warm());
            WebSocket socket;
            // No Origin header and no token in the URL (v1.md "Upgrade").
            using (var cts = new CancellationTokenSource(Timeout)) socket = await SocketFactory(url, cts.Token).ConfigureAwait(false);
            ws = socket;
            hello = new TaskCompletionSource<JsonObject>(TaskCreationOptions.RunContinuationsAsynchronously);
            receiving = Task.Run(() => ReceiveLoop(socket));
            // No key yet: pair on this connection first (the player allows it on the memory page).
            // Another copy of the mod sharing the store may have paired since this one started:
            // its key, not a new pairing (which would replace that copy's key on the server).
            if (string.IsNullOrEmpty(token)) token = KeptKey();
            if (string.IsNullOrEmpty(token) && !await PairAsync().ConfigureAwait(false))
            {
                // The other copy's key came while this request waited: withdraw it (the server
                // drops a request whose connection went away) and say hello on a new connection.
                Log("another copy of this mod paired meanwhile: its key, no second pairing");
                ws = null;   // this socket's end is no loss to report
                try { socket.Abort(); } catch (Exception) { }
                await ConnectCore().ConfigureAwait(false);
                return;
            }
            var frame = new JsonObject()
                .Add("type", "adapter.hello").Add("id", NextId("hello")).Add("protocol", "v1")
                .Add("adapter", new JsonObject().Add("name", adapterName).Add("version", adapterVersion))
                .Add("identity", identity)
                .Add("token", token)
                .Add("capabilities", new JsonObject().Add("image", true).Add("voice", false))
                .Add("timezone", timezone);
            var declared = Declarations();
            if (declared.Count > 0) frame["actions"] = declared;   // v1.md "Actions"
            await Send(Json.Write(frame), true).ConfigureAwait(false);
            var answer = await WithTimeout(hello.Task, "server.hello").ConfigureAwait(false);
            if (answer.Str("type") != "server.hello")
            {
                if (answer.Str("code") == "unauthorized") KeyRefused();
                throw Refusal(answer, false);
            }
            await warm.ConfigureAwait(false);
            ServerHello = answer;
            int ms = Convert.ToInt32(answer["heartbeatMs"]);
            heartbeat = new Timer(_ => Beat(socket), null, ms, ms);
            Log("connected, session " + answer.Str("sessionId") + ", heartbeat every " + ms + " ms");
        }

        // The first state update after a connection cost the game a 47-60 ms tick: the JIT compiling
        // the checks, the writer and the projection (which parses its rules once) on the game's
        // thread. Done here first, on the pool, while the connection opens (before ServerHello).
        private void Warm()
        {
            try
            {
                var observation = new JsonObject().Add("schemaVersion", 1L).Add("capturedAt", "2026-01-01T00:00:00Z")
                    .Add("world", new JsonObject().Add("location", "Farm").Add("time", "08:10").Add("day", 1L))
                    .Add("player", new JsonObject().Add("health", 100L).Add("stamina", 72.3f));
                var context = Projection.Project(observation, "今天适合钓鱼吗？", identity.Str("gameId"));
                Budget.CheckContext(context, "modelContext");
                Budget.CheckChatText("warm");
                string json = Json.Write(new JsonObject().Add("type", "state.update").Add("modelContext", context));
                Budget.CheckFrame("state.update", json);
                Encoding.UTF8.GetBytes(json);
            }
            catch (Exception) { } // warming only: the real call reports its own errors
        }

        // -- pairing (v1.md "Pairing") ------------------------------------------------------

        /// <summary>Called from Poll() with the code the player sees on the memory page beside this
        /// mod's pair request, and the seconds it stays good: show it in the game.</summary>
        public Action<string, int> OnPairCode;
        /// <summary>Called from Poll() with the key pairing gave this mod: keep it (ModFolder.SaveKey)
        /// and pass it as the token from then on. The session goes on with it at once.</summary>
        public Action<string> OnPaired;
        /// <summary>Called from Poll() with the key the server refused (revoked on the page, or
        /// wrong): forget it (ModFolder.ForgetKey(key): only that key, not one another copy of the
        /// mod kept since), and the next Start() pairs again.</summary>
        public Action<string> OnKeyRefused;
        /// <summary>Reads the kept key again (e.g. folder.Key) before the client pairs, on a pool
        /// thread: another copy of the mod that shares the store may have paired meanwhile.</summary>
        public Func<string> KeySource;
        /// <summary>This install's id, sent in adapter.pair (ModFolder.InstallId(); protocol/v1.md "Keys
        /// per install"): the server keeps a key per install. Null: one key per mod, as before. A
        /// server older than the field refuses it, and the request is sent again without it.</summary>
        public string InstallId;
        /// <summary>How often a waiting pair request looks for a key another copy kept.</summary>
        public TimeSpan KeyRecheck = TimeSpan.FromSeconds(0.5);
        private ConcurrentQueue<JsonObject> pairFrames;

        private string KeptKey()
        {
            var source = KeySource;
            if (source == null) return null;
            try { return source(); }
            catch (Exception e) { Log("could not read the kept key: " + e.Message); return null; }
        }

        private void KeyRefused()
        {
            string refused = token;
            token = null;
            Post(() => { var f = OnKeyRefused; if (f != null) f(refused); });
        }
        private SemaphoreSlim pairSignal;

        // True when paired here; false when another copy's key turned up (token holds it) while
        // the request waited for the player.
        private async Task<bool> PairAsync()
        {
            var frames = new ConcurrentQueue<JsonObject>();
            pairSignal = new SemaphoreSlim(0);
            pairFrames = frames;
            try
            {
                string install = InstallId;
                var request = PairRequest(install);
                await Send(Json.Write(request), true).ConfigureAwait(false);
                var pending = await NextPairFrame(Timeout).ConfigureAwait(false);
                if (!string.IsNullOrEmpty(install) && NamesInstallId(pending))
                {
                    // A server older than installId refuses it as unknown: the same request without it.
                    Log("the server does not know installId: pairing without it");
                    await Send(Json.Write(PairRequest(null)), true).ConfigureAwait(false);
                    pending = await NextPairFrame(Timeout).ConfigureAwait(false);
                }
                if (pending.Str("type") != "pair.pending") throw Refusal(pending, false);
                string code = pending.Str("code");
                int seconds = pending["expiresInSeconds"] is long ? (int)(long)pending["expiresInSeconds"] : 120;
                Post(() => { var f = OnPairCode; if (f != null) f(code, seconds); });
                Log("pairing: allow code " + code + " on the XiaoTangYuan page within " + seconds + " s");
                // The player's click may take the whole time; the server says when it is over.
                // Meanwhile another copy of the mod that shares the store may keep its key.
                JsonObject answer = null;
                var waited = TimeSpan.Zero;
                var limit = TimeSpan.FromSeconds(seconds + 15);
                while (answer == null)
                {
                    if (waited >= limit) throw new TimeoutException("no pairing answer within " + limit.TotalSeconds + " s");
                    if (await pairSignal.WaitAsync(KeyRecheck).ConfigureAwait(false)) frames.TryDequeue(out answer);
                    else
                    {
                        waited += KeyRecheck;
                        string kept = KeptKey();
                        if (!string.IsNullOrEmpty(kept)) { token = kept; return false; }
                    }
                }
                string type = answer.Str("type");
                if (type == "pair.granted" && !string.IsNullOrEmpty(answer.Str("key")))
                {
                    string key = answer.Str("key");
                    token = key;
                    Post(() => { var f = OnPaired; if (f != null) f(key); });
                    Log("paired");
                    return true;
                }
                if (type == "pair.denied" || type == "pair.expired")
                {
                    string why = type == "pair.denied" ? "pair_denied" : "pair_expired";
                    throw Refusal(new JsonObject().Add("code", why).Add("message", type == "pair.denied"
                        ? "the player denied the pairing on the XiaoTangYuan page" : "nobody allowed the pairing in time"), false);
                }
                throw Refusal(answer, false);
            }
            finally { pairFrames = null; }
        }

        private JsonObject PairRequest(string install)
        {
            var request = new JsonObject().Add("type", "adapter.pair").Add("id", NextId("pair"))
                .Add("adapter", new JsonObject().Add("name", adapterName).Add("version", adapterVersion))
                .Add("gameId", identity.Str("gameId"));
            return string.IsNullOrEmpty(install) ? request : request.Add("installId", install);
        }

        private static bool NamesInstallId(JsonObject frame)
        {
            var fields = frame == null || frame.Str("type") != "error" ? null : frame.List("fields");
            return fields != null && fields.Contains("installId");
        }

        private async Task<JsonObject> NextPairFrame(TimeSpan wait)
        {
            if (!await pairSignal.WaitAsync(wait).ConfigureAwait(false)) throw new TimeoutException("no pairing answer within " + wait.TotalSeconds + " s");
            JsonObject frame;
            pairFrames.TryDequeue(out frame);
            return frame;
        }

        private async void Beat(WebSocket socket)
        {
            try
            {
                if (socket == ws && socket.State == WebSocketState.Open) await SendRawAsync("{\"type\":\"heartbeat\"}").ConfigureAwait(false);
            }
            catch (Exception) { } // the receive loop notices a dead connection
        }

        private async Task<T> WithTimeout<T>(Task<T> task, string what)
        {
            if (await Task.WhenAny(task, Task.Delay(Timeout)).ConfigureAwait(false) != task) throw new TimeoutException("no " + what + " within " + Timeout.TotalSeconds + " s");
            return await task.ConfigureAwait(false);
        }

        // -- receiving ----------------------------------------------------------------------

        private async Task ReceiveLoop(WebSocket socket)
        {
            var buffer = new byte[16384];
            var message = new MemoryStream();
            try
            {
                while (socket.State == WebSocketState.Open)
                {
                    var result = await socket.ReceiveAsync(new ArraySegment<byte>(buffer), CancellationToken.None).ConfigureAwait(false);
                    if (result.MessageType == WebSocketMessageType.Close)
                    {
                        await AnswerClose(socket).ConfigureAwait(false);
                        break;
                    }
                    message.Write(buffer, 0, result.Count);
                    if (!result.EndOfMessage) continue; // a fragmented frame: keep joining
                    string text = Encoding.UTF8.GetString(message.ToArray());
                    message.SetLength(0);
                    JsonObject frame;
                    try { frame = Json.Parse(text) as JsonObject; }
                    catch (JsonException e) { Log("unreadable server frame: " + e.Message); continue; }
                    if (frame != null) Dispatch(frame);
                }
            }
            catch (Exception e) { Log("connection lost: " + e.Message); }
            int code = socket.CloseStatus.HasValue ? (int)socket.CloseStatus.Value : 1006;
            string reason = socket.CloseStatusDescription;
            // A connection that ended without the close handshake is dropped, never left open.
            if (socket.State != WebSocketState.Closed) { try { socket.Abort(); } catch (Exception) { } }
            Ended(socket, code, reason);
        }

        // The server's close frame is answered with the same code (RFC 6455 5.5.1): a server
        // waits for that answer before it lets the connection go, and at shutdown before it exits.
        private async Task AnswerClose(WebSocket socket)
        {
            if (socket.State != WebSocketState.CloseReceived) return;
            var status = socket.CloseStatus ?? WebSocketCloseStatus.NormalClosure;
            bool locked = false;
            try
            {
                locked = await sendLock.WaitAsync(TimeSpan.FromSeconds(2)).ConfigureAwait(false);
                using (var cts = new CancellationTokenSource(TimeSpan.FromSeconds(2)))
                    await socket.CloseOutputAsync(status, socket.CloseStatusDescription, cts.Token).ConfigureAwait(false);
            }
            catch (Exception e) { Log("could not answer the close: " + e.Message); }
            finally { if (locked) sendLock.Release(); }
        }

        private void Dispatch(JsonObject frame)
        {
            string type = frame.Str("type"), id = frame.Str("id");
            var pairing = pairFrames;
            if (ServerHello == null && pairing != null && type != null && (type.StartsWith("pair.", StringComparison.Ordinal) || type == "error"))
            {
                pairing.Enqueue(frame);
                pairSignal.Release();
                return;
            }
            if (DispatchMemory(frame) || DispatchAction(frame) || DispatchCompanion(frame) || DispatchVoice(frame)) return;
            var h = hello;
            if (ServerHello == null && h != null && (type == "server.hello" || type == "error"))
            {
                h.TrySetResult(frame);
                return;
            }
            lock (gate)
            {
                KeyValuePair<ChatResult, TaskCompletionSource<ChatResult>> chat;
                if (id != null && chats.TryGetValue(id, out chat))
                {
                    var r = chat.Key;
                    if (type == "chat.delta")
                    {
                        string text = frame.Str("text");
                        r.Deltas.Add(text);
                        Post(() => { var f = OnDelta; if (f != null) f(id, text); });
                        return;
                    }
                    chats.Remove(id);
                    r.Done = type == "chat.done";
                    r.Text = frame.Str("text");
                    r.Code = frame.Str("code");
                    r.Message = frame.Str("message");
                    r.Context = frame.Str("context");
                    r.ImageSent = frame["imageSent"] is bool && (bool)frame["imageSent"];
                    EndChat(r, chat.Value);
                    return;
                }
                TaskCompletionSource<JsonObject> request;
                if (id != null && requests.TryGetValue(id, out request))
                {
                    requests.Remove(id);
                    request.TrySetResult(frame);
                    return;
                }
            }
            if (type == "error") Post(() => { var f = OnError; if (f != null) f(frame); });
        }

        private void EndChat(ChatResult result, TaskCompletionSource<ChatResult> tcs)
        {
            if (tcs.TrySetResult(result)) Post(() => { var f = OnChatEnd; if (f != null) f(result); });
        }

        private void Ended(WebSocket socket, int code, string reason)
        {
            if (socket != ws) return;
            if (heartbeat != null) heartbeat.Dispose();
            var h = hello;
            if (h != null) h.TrySetException(new IOException("connection closed (" + code + " " + reason + ")"));
            var pairing = pairFrames;
            if (pairing != null)
            {
                pairing.Enqueue(new JsonObject().Add("type", "error").Add("code", "connection_lost").Add("message", "connection closed (" + code + " " + reason + ")"));
                pairSignal.Release();
            }
            lock (gate)
            {
                foreach (var c in chats.Values)
                {
                    c.Key.Code = "connection_lost";
                    EndChat(c.Key, c.Value);
                }
                chats.Clear();
                foreach (var r in requests.Values) r.TrySetException(new IOException("connection lost"));
                requests.Clear();
            }
            Log("closed " + code + " " + reason);
            // 4001 on an open session: the key was revoked on the page.
            if (code == 4001 && ServerHello != null) KeyRefused();
            if (!closing && Reconnect && ServerHello != null && RetryCodes.Contains(code)) Task.Run(() => Reopen());
        }

        /// <summary>Connect in the background, trying again with backoff until a session opens (the
        /// game may start before the server), then reconnect after every loss as usual. Returns at
        /// once: safe from the game's main thread; progress goes to OnLog ("no server" once per
        /// outage), a refused hello ends it (XtyRefusedException's message in OnLog).</summary>
        public void Start()
        {
            closing = false;
            Task.Run(() => Reopen(true));
        }

        private int reopening;

        private async Task Reopen(bool first = false)
        {
            // One loop at a time: a loss while Start() is still trying changes nothing.
            if (Interlocked.CompareExchange(ref reopening, 1, 0) != 0) return;
            try
            {
                var random = new Random();
                string lastFailure = null;
                for (int attempt = 1; !closing; attempt++)
                {
                    if (!(first && attempt == 1))
                    {
                        double wait = Math.Min(BackoffCap, BackoffBase * Math.Pow(2, Math.Min(attempt - 1, 30)));
                        await Task.Delay(TimeSpan.FromSeconds(wait * (1 - 0.2 * random.NextDouble()))).ConfigureAwait(false);
                    }
                    try
                    {
                        ServerHello = null;
                        await ConnectCore().ConfigureAwait(false);
                        if (lastContext != null) await UpdateStateAsync(lastContext).ConfigureAwait(false);
                        if (!first || attempt > 1) Log("reconnected after " + attempt + " attempt(s)");
                        return;
                    }
                    catch (XtyRefusedException e) when (e.Code == "pair_busy")
                    {
                        // Another copy of this mod is pairing now: its key comes to the shared
                        // store, and KeySource finds it on the next attempt.
                        if (e.Message != lastFailure) Log("another copy of this mod is pairing; trying again with backoff");
                        lastFailure = e.Message;
                        var busy = ws;
                        if (busy != null) { try { busy.Abort(); } catch (Exception) { } }
                    }
                    catch (XtyRefusedException e) { Log("reconnect refused: " + e.Message); return; }
                    catch (Exception e)
                    {
                        // The same failure again is the same outage: said once.
                        if (e.Message != lastFailure) Log("no server yet at " + url + ", trying again with backoff: " + e.Message);
                        lastFailure = e.Message;
                        var stale = ws;
                        if (stale != null && stale.State != WebSocketState.Open) { try { stale.Abort(); } catch (Exception) { } }
                    }
                }
            }
            finally { Interlocked.Exchange(ref reopening, 0); }
        }

        // -- sending ------------------------------------------------------------------------

        private sealed class Outgoing
        {
            public string Json;
            public bool Handshake;   // adapter.pair / adapter.hello: the only frames before server.hello
            public readonly TaskCompletionSource<bool> Sent = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        }

        private readonly ConcurrentQueue<Outgoing> outbox = new ConcurrentQueue<Outgoing>();
        private readonly SemaphoreSlim outboxSignal = new SemaphoreSlim(0);
        private readonly CancellationTokenSource stopped = new CancellationTokenSource();
        private int outboxCount, senderStarted;

        /// <summary>Send one text frame as is, after the frames queued before it. Returns at once
        /// (the task ends when the sender task wrote it): safe from the game's thread.</summary>
        public Task SendRawAsync(string json) { return Send(json, false); }

        private Task Send(string json, bool handshake)
        {
            if (Interlocked.Increment(ref outboxCount) > MaxQueuedFrames)
            {
                Interlocked.Decrement(ref outboxCount);
                var full = new TaskCompletionSource<bool>();
                full.SetException(new XtyRefusedException("send_queue_full",
                    MaxQueuedFrames + " frames are already waiting to be sent (is the server reachable?)", new List<string>(), true));
                return full.Task;
            }
            var item = new Outgoing { Json = json, Handshake = handshake };
            outbox.Enqueue(item);
            if (Interlocked.CompareExchange(ref senderStarted, 1, 0) == 0) Task.Run(() => SendLoop());
            // Wakes the sender task; its continuation is queued to the thread pool, not run here.
            outboxSignal.Release();
            return item.Sent.Task;
        }

        // The only writer of frames: one at a time, in the order they were queued.
        private async Task SendLoop()
        {
            while (true)
            {
                try { await outboxSignal.WaitAsync(stopped.Token).ConfigureAwait(false); }
                catch (OperationCanceledException) { break; }
                Outgoing item;
                if (!outbox.TryDequeue(out item)) continue;
                Interlocked.Decrement(ref outboxCount);
                try
                {
                    await Write(item).ConfigureAwait(false);
                    item.Sent.TrySetResult(true);
                }
                catch (Exception e) { item.Sent.TrySetException(e); }
            }
            Outgoing rest;
            while (outbox.TryDequeue(out rest)) rest.Sent.TrySetException(new ObjectDisposedException("XtyClient"));
        }

        private async Task Write(Outgoing item)
        {
            var bytes = Encoding.UTF8.GetBytes(item.Json);
            await sendLock.WaitAsync().ConfigureAwait(false);
            try
            {
                var socket = ws;
                // A frame queued for a session that ended (or before the new one said hello) is not
                // sent on the next one: its caller hears "not connected", as before any hello.
                if (socket == null || socket.State != WebSocketState.Open || (!item.Handshake && ServerHello == null))
                    throw new IOException("not connected");
                await socket.SendAsync(new ArraySegment<byte>(bytes), WebSocketMessageType.Text, true, CancellationToken.None).ConfigureAwait(false);
            }
            finally { sendLock.Release(); }
        }

        /// <summary>Send a frame that has an answer with its id (stats.get, memory.get, a frame
        /// that will be refused) and return the answer.</summary>
        public async Task<JsonObject> RequestAsync(JsonObject frame)
        {
            if (frame.Str("id") == null) frame["id"] = NextId("req");
            var tcs = new TaskCompletionSource<JsonObject>(TaskCreationOptions.RunContinuationsAsynchronously);
            lock (gate) requests[frame.Str("id")] = tcs;
            try { await SendRawAsync(Json.Write(frame)).ConfigureAwait(false); }
            catch (Exception) { lock (gate) requests.Remove(frame.Str("id")); throw; }
            return await WithTimeout(tcs.Task, "answer to " + frame.Str("type")).ConfigureAwait(false);
        }

        /// <summary>Replace the current modelContext (checked locally first; Budget).</summary>
        public async Task UpdateStateAsync(JsonObject modelContext, JsonObject newIdentity = null)
        {
            Budget.CheckContext(modelContext, "modelContext");
            var frame = new JsonObject().Add("type", "state.update").Add("modelContext", modelContext);
            if (newIdentity != null) frame["identity"] = newIdentity;
            string json = Json.Write(frame);
            Budget.CheckFrame("state.update", json);
            await SendRawAsync(json).ConfigureAwait(false);
            lastContext = modelContext;
            if (newIdentity != null) identity = newIdentity;
        }

        /// <summary>One player turn: returns at chat.done or chat.error (also given to OnChatEnd);
        /// deltas go to OnDelta. A refused frame comes back as a ChatResult with the error's Code.
        /// source: "text" (typed) or "voice" (transcribed speech).</summary>
        public async Task<ChatResult> ChatAsync(string text, byte[] image, string mime, JsonObject modelContext, string source = "text")
        {
            Budget.CheckChatText(text);
            EndTyping();
            if (source != "text" && source != "voice") throw new ArgumentException("source must be \"text\" or \"voice\"", "source");
            var frame = new JsonObject().Add("type", "chat.send").Add("id", NextId("chat")).Add("text", text).Add("source", source);
            if (image != null) frame["image"] = new JsonObject().Add("mime", mime).Add("data", Convert.ToBase64String(image));
            if (modelContext != null)
            {
                Budget.CheckContext(modelContext, "context.modelContext");
                frame["context"] = new JsonObject().Add("modelContext", modelContext);
            }
            string json = Json.Write(frame);
            Budget.CheckFrame("chat.send", json);
            var result = new ChatResult { Id = frame.Str("id") };
            var tcs = new TaskCompletionSource<ChatResult>(TaskCreationOptions.RunContinuationsAsynchronously);
            lock (gate) chats[result.Id] = new KeyValuePair<ChatResult, TaskCompletionSource<ChatResult>>(result, tcs);
            try { await SendRawAsync(json).ConfigureAwait(false); }
            catch (Exception) { lock (gate) chats.Remove(result.Id); throw; }
            if (modelContext != null) lastContext = modelContext;
            // A reply streams for a while: wait up to a minute for its end.
            if (await Task.WhenAny(tcs.Task, Task.Delay(TimeSpan.FromSeconds(60))).ConfigureAwait(false) != tcs.Task) await CancelAsync(result.Id).ConfigureAwait(false);
            return await tcs.Task.ConfigureAwait(false);
        }

        public Task CancelAsync(string chatId)
        {
            return SendRawAsync(Json.Write(new JsonObject().Add("type", "chat.cancel").Add("id", chatId)));
        }

        /// <summary>Close (1000) after the frames already queued. Returns at once; the close
        /// handshake runs on the thread pool.</summary>
        public Task CloseAsync()
        {
            closing = true;
            if (heartbeat != null) heartbeat.Dispose();
            return Task.Run(() => CloseCore());
        }

        private async Task CloseCore()
        {
            var socket = ws;
            if (socket != null && socket.State == WebSocketState.Open)
            {
                // Behind the sender: a frame being written is not cut by the close frame.
                bool locked = await sendLock.WaitAsync(TimeSpan.FromSeconds(5)).ConfigureAwait(false);
                using (var cts = new CancellationTokenSource(TimeSpan.FromSeconds(5)))
                {
                    try { await socket.CloseAsync(WebSocketCloseStatus.NormalClosure, "bye", cts.Token).ConfigureAwait(false); }
                    catch (Exception) { }
                    finally { if (locked) sendLock.Release(); }
                }
            }
            var loop = receiving;
            if (loop != null) await Task.WhenAny(loop, Task.Delay(TimeSpan.FromSeconds(2))).ConfigureAwait(false);
        }

        public static XtyRefusedException Refusal(JsonObject error, bool local)
        {
            var fields = new List<string>();
            foreach (var f in error.List("fields") ?? new List<object>()) fields.Add((string)f);
            return new XtyRefusedException(error.Str("code"), error.Str("message"), fields, local);
        }

        public void Dispose()
        {
            closing = true;
            if (heartbeat != null) heartbeat.Dispose();
            stopped.Cancel();
            var socket = ws;
            if (socket != null) Task.Run(() => socket.Dispose());
        }
    }
}
