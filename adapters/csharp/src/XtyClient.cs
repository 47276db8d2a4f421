// One protocol/v1 session over ClientWebSocket (v1.md "Transport", "Session"): hello, a receive
// loop that joins fragmented messages, one sender at a time, heartbeats on a real-time timer
// (they go on while the game is paused), reconnect with backoff, replies matched by frame id.
using System;
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
        private readonly string token;
        private readonly string adapterName, adapterVersion, timezone;
        private readonly SemaphoreSlim sendLock = new SemaphoreSlim(1, 1);
        private readonly object gate = new object();
        private readonly Dictionary<string, TaskCompletionSource<JsonObject>> requests = new Dictionary<string, TaskCompletionSource<JsonObject>>();
        private readonly Dictionary<string, KeyValuePair<ChatResult, TaskCompletionSource<ChatResult>>> chats = new Dictionary<string, KeyValuePair<ChatResult, TaskCompletionSource<ChatResult>>>();
        private ClientWebSocket ws;
        private TaskCompletionSource<JsonObject> hello;
        private Timer heartbeat;
        private JsonObject identity;
        private JsonObject lastContext;
        private int nextId;
        private volatile bool closing;
        private Task receiving;

        /// <summary>Called with (chat id, text) for every chat.delta, as it arrives.</summary>
        public Action<string, string> OnDelta;
        /// <summary>Called with every error frame that answers no request (a refused state.update).</summary>
        public Action<JsonObject> OnError;
        /// <summary>Called with a line of what the client does (connect, reconnect, close).</summary>
        public Action<string> OnLog;
        /// <summary>Reconnect delays: Base * 2^n seconds, at most Cap, 20 % jitter; false: never reconnect.</summary>
        public bool Reconnect = true;
        public double BackoffBase = 1.0, BackoffCap = 30.0;
        public TimeSpan Timeout = TimeSpan.FromSeconds(15);

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

        private void Log(string line) { var f = OnLog; if (f != null) f(line); }

        private string NextId(string kind) { return kind + "-" + Interlocked.Increment(ref nextId); }

        // -- connecting ---------------------------------------------------------------------

        /// <summary>Connect and say hello; throws XtyRefusedException when the hello is refused
        /// (a wrong token is "unauthorized", which a header token would hide behind a failed handshake).</summary>
        public async Task ConnectAsync()
        {
            closing = false;
            var socket = new ClientWebSocket();
            // No Origin header and no token in the URL (v1.md "Upgrade").
            using (var cts = new CancellationTokenSource(Timeout)) await socket.ConnectAsync(url, cts.Token);
            ws = socket;
            hello = new TaskCompletionSource<JsonObject>();
            var frame = new JsonObject()
                .Add("type", "adapter.hello").Add("id", NextId("hello")).Add("protocol", "v1")
                .Add("adapter", new JsonObject().Add("name", adapterName).Add("version", adapterVersion))
                .Add("identity", identity)
                .Add("token", token)
                .Add("capabilities", new JsonObject().Add("image", true).Add("voice", false))
                .Add("timezone", timezone);
            receiving = Task.Run(() => ReceiveLoop(socket));
            await SendRawAsync(Json.Write(frame));
            var answer = await WithTimeout(hello.Task, "server.hello");
            if (answer.Str("type") != "server.hello") throw Refusal(answer, false);
            ServerHello = answer;
            int ms = Convert.ToInt32(answer["heartbeatMs"]);
            heartbeat = new Timer(_ => Beat(socket), null, ms, ms);
            Log("connected, session " + answer.Str("sessionId") + ", heartbeat every " + ms + " ms");
        }

        private async void Beat(ClientWebSocket socket)
        {
            try
            {
                if (socket == ws && socket.State == WebSocketState.Open) await SendRawAsync("{\"type\":\"heartbeat\"}");
            }
            catch (Exception) { } // the receive loop notices a dead connection
        }

        private async Task<T> WithTimeout<T>(Task<T> task, string what)
        {
            if (await Task.WhenAny(task, Task.Delay(Timeout)) != task) throw new TimeoutException("no " + what + " within " + Timeout.TotalSeconds + " s");
            return await task;
        }

        // -- receiving ----------------------------------------------------------------------

        private async Task ReceiveLoop(ClientWebSocket socket)
        {
            var buffer = new byte[16384];
            var message = new MemoryStream();
            try
            {
                while (socket.State == WebSocketState.Open)
                {
                    var result = await socket.ReceiveAsync(new ArraySegment<byte>(buffer), CancellationToken.None);
                    if (result.MessageType == WebSocketMessageType.Close) break;
                    message.Write(buffer, 0, result.Count);
                    if (!result.EndOfMessage) continue; // a fragmented frame: keep joining
                    string text = Encoding.UTF8.GetString(message.ToArray());
                    message.SetLength(0);
                    Dispatch((JsonObject)Json.Parse(text));
                }
            }
            catch (Exception e) { Log("connection lost: " + e.Message); }
            int code = socket.CloseStatus.HasValue ? (int)socket.CloseStatus.Value : 1006;
            Ended(socket, code, socket.CloseStatusDescription);
        }

        private void Dispatch(JsonObject frame)
        {
            string type = frame.Str("type"), id = frame.Str("id");
            if (DispatchMemory(frame)) return;
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
                        r.Deltas.Add(frame.Str("text"));
                        var f = OnDelta;
                        if (f != null) f(id, frame.Str("text"));
                        return;
                    }
                    chats.Remove(id);
                    r.Done = type == "chat.done";
                    r.Text = frame.Str("text");
                    r.Code = frame.Str("code");
                    r.Message = frame.Str("message");
                    r.Context = frame.Str("context");
                    r.ImageSent = frame["imageSent"] is bool && (bool)frame["imageSent"];
                    chat.Value.TrySetResult(r);
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
            if (type == "error") { var f = OnError; if (f != null) f(frame); }
        }

        private void Ended(ClientWebSocket socket, int code, string reason)
        {
            if (socket != ws) return;
            if (heartbeat != null) heartbeat.Dispose();
            var h = hello;
            if (h != null) h.TrySetException(new IOException("connection closed (" + code + " " + reason + ")"));
            lock (gate)
            {
                foreach (var c in chats.Values)
                {
                    c.Key.Code = "connection_lost";
                    c.Value.TrySetResult(c.Key);
                }
                chats.Clear();
                foreach (var r in requests.Values) r.TrySetException(new IOException("connection lost"));
                requests.Clear();
            }
            Log("closed " + code + " " + reason);
            if (!closing && Reconnect && ServerHello != null && RetryCodes.Contains(code)) Task.Run(() => Reopen());
        }

        private async Task Reopen()
        {
            var random = new Random();
            for (int attempt = 1; !closing; attempt++)
            {
                double wait = Math.Min(BackoffCap, BackoffBase * Math.Pow(2, Math.Min(attempt - 1, 30)));
                await Task.Delay(TimeSpan.FromSeconds(wait * (1 - 0.2 * random.NextDouble())));
                try
                {
                    ServerHello = null;
                    await ConnectAsync();
                    if (lastContext != null) await UpdateStateAsync(lastContext);
                    Log("reconnected after " + attempt + " attempt(s)");
                    return;
                }
                catch (XtyRefusedException e) { Log("reconnect refused: " + e.Message); return; }
                catch (Exception e) { Log("reconnect failed: " + e.Message); }
            }
        }

        // -- sending ------------------------------------------------------------------------

        /// <summary>Send one text frame as is; one sender at a time (the frames never interleave).</summary>
        public async Task SendRawAsync(string json)
        {
            var bytes = Encoding.UTF8.GetBytes(json);
            await sendLock.WaitAsync();
            try
            {
                var socket = ws;
                if (socket == null || socket.State != WebSocketState.Open) throw new IOException("not connected");
                await socket.SendAsync(new ArraySegment<byte>(bytes), WebSocketMessageType.Text, true, CancellationToken.None);
            }
            finally { sendLock.Release(); }
        }

        /// <summary>Send a frame that has an answer with its id (stats.get, memory.get, a frame
        /// that will be refused) and return the answer.</summary>
        public async Task<JsonObject> RequestAsync(JsonObject frame)
        {
            if (frame.Str("id") == null) frame["id"] = NextId("req");
            var tcs = new TaskCompletionSource<JsonObject>();
            lock (gate) requests[frame.Str("id")] = tcs;
            await SendRawAsync(Json.Write(frame));
            return await WithTimeout(tcs.Task, "answer to " + frame.Str("type"));
        }

        /// <summary>Replace the current modelContext (checked locally first; Budget).</summary>
        public async Task UpdateStateAsync(JsonObject modelContext, JsonObject newIdentity = null)
        {
            Budget.CheckContext(modelContext, "modelContext");
            var frame = new JsonObject().Add("type", "state.update").Add("modelContext", modelContext);
            if (newIdentity != null) frame["identity"] = newIdentity;
            string json = Json.Write(frame);
            Budget.CheckFrame("state.update", json);
            await SendRawAsync(json);
            lastContext = modelContext;
            if (newIdentity != null) identity = newIdentity;
        }

        /// <summary>One player turn: returns at chat.done or chat.error; deltas go to OnDelta.
        /// A refused frame comes back as a ChatResult with the error's Code.</summary>
        public async Task<ChatResult> ChatAsync(string text, byte[] image, string mime, JsonObject modelContext)
        {
            Budget.CheckChatText(text);
            var frame = new JsonObject().Add("type", "chat.send").Add("id", NextId("chat")).Add("text", text).Add("source", "text");
            if (image != null) frame["image"] = new JsonObject().Add("mime", mime).Add("data", Convert.ToBase64String(image));
            if (modelContext != null)
            {
                Budget.CheckContext(modelContext, "context.modelContext");
                frame["context"] = new JsonObject().Add("modelContext", modelContext);
            }
            string json = Json.Write(frame);
            Budget.CheckFrame("chat.send", json);
            var result = new ChatResult { Id = frame.Str("id") };
            var tcs = new TaskCompletionSource<ChatResult>();
            lock (gate) chats[result.Id] = new KeyValuePair<ChatResult, TaskCompletionSource<ChatResult>>(result, tcs);
            await SendRawAsync(json);
            if (modelContext != null) lastContext = modelContext;
            // A reply streams for a while: wait up to a minute for its end.
            if (await Task.WhenAny(tcs.Task, Task.Delay(TimeSpan.FromSeconds(60))) != tcs.Task) await CancelAsync(result.Id);
            return await tcs.Task;
        }

        public Task CancelAsync(string chatId)
        {
            return SendRawAsync(Json.Write(new JsonObject().Add("type", "chat.cancel").Add("id", chatId)));
        }

        public async Task CloseAsync()
        {
            closing = true;
            if (heartbeat != null) heartbeat.Dispose();
            var socket = ws;
            if (socket != null && socket.State == WebSocketState.Open)
            {
                using (var cts = new CancellationTokenSource(TimeSpan.FromSeconds(5)))
                {
                    try { await socket.CloseAsync(WebSocketCloseStatus.NormalClosure, "bye", cts.Token); }
                    catch (Exception) { }
                }
            }
            var loop = receiving;
            if (loop != null) await Task.WhenAny(loop, Task.Delay(TimeSpan.FromSeconds(2)));
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
            if (ws != null) ws.Dispose();
        }
    }
}
