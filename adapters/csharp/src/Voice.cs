// Push-to-talk (v1.md "Voice"): the mod calls VoiceStart() when the player presses its talk key
// and VoiceStop() when it is released; the server records the PC's microphone in between,
// recognises the speech on the PC, sends what it heard (OnTranscript: partial, then final) and
// runs the turn under the utterance's id, so its reply comes to OnDelta and OnChatEnd like a
// typed one's, and is spoken on the PC's speakers. The mod never touches audio. Both calls
// return at once: safe to call from the game's main thread 60 times a second.
using System;
using System.Collections.Generic;
using System.Threading.Tasks;

namespace XiaoTangYuan.Adapter
{
    public sealed partial class XtyClient
    {
        /// <summary>What was heard: (utterance id, text, final). Partial ones while the player
        /// speaks, then the final one. Runs in Poll(), on the main thread.</summary>
        public Action<string, string, bool> OnTranscript;

        /// <summary>voice.error: (utterance id, code, message for the player, Chinese then
        /// English). Runs in Poll(). Unless the code says otherwise the utterance is over and its
        /// turn ends in OnChatEnd with this code.</summary>
        public Action<string, string, string> OnVoiceError;

        /// <summary>For speech "frames": one sentence of the reply as mono 16-bit PCM at the given
        /// rate: (utterance id, sequence, sentence, rate, pcm). Runs in Poll().</summary>
        public Action<string, int, string, int, byte[]> OnSpeech;

        // voice.error codes after which the utterance's turn still comes.
        private static readonly HashSet<string> VoiceGoesOn = new HashSet<string> {
            "voice_timeout", "audio_too_long", "audio_invalid", "speech_unavailable" };

        private readonly Dictionary<string, Task<ChatResult>> voiceTurns = new Dictionary<string, Task<ChatResult>>();

        /// <summary>The player pressed the talk key: the utterance's id, at once (never waits).
        /// speech: "speakers" (the PC's speakers), "frames" (OnSpeech) or "none".</summary>
        public string VoiceStart(string speech = "speakers")
        {
            if (speech != "speakers" && speech != "frames" && speech != "none") throw new ArgumentException("speech must be \"speakers\", \"frames\" or \"none\"", "speech");
            string id = NextId("voice");
            var result = new ChatResult { Id = id };
            var tcs = new TaskCompletionSource<ChatResult>(TaskCreationOptions.RunContinuationsAsynchronously);
            lock (gate)
            {
                chats[id] = new KeyValuePair<ChatResult, TaskCompletionSource<ChatResult>>(result, tcs);
                voiceTurns[id] = tcs.Task;
            }
            var frame = new JsonObject().Add("type", "voice.start").Add("id", id).Add("speech", speech);
            SendRawAsync(Json.Write(frame)).ContinueWith(t => EndVoice(id, "not_sent", t.Exception.GetBaseException().Message), TaskContinuationOptions.OnlyOnFaulted);
            return id;
        }

        /// <summary>The player released the key: the server transcribes what it heard and answers.</summary>
        public Task VoiceStop(string id)
        {
            return SendRawAsync(Json.Write(new JsonObject().Add("type", "voice.stop").Add("id", id)));
        }

        /// <summary>Drop the utterance unheard (the player pressed Escape): no transcript, no turn.</summary>
        public Task VoiceCancel(string id)
        {
            EndVoice(id, "cancelled", "");
            return SendRawAsync(Json.Write(new JsonObject().Add("type", "voice.cancel").Add("id", id)));
        }

        /// <summary>The turn of utterance id: ends at its chat.done or chat.error, or its voice.error.</summary>
        public Task<ChatResult> VoiceTurn(string id)
        {
            lock (gate)
            {
                Task<ChatResult> turn;
                if (voiceTurns.TryGetValue(id, out turn)) return turn;
            }
            throw new ArgumentException("no utterance " + id, "id");
        }

        private void EndVoice(string id, string code, string message)
        {
            lock (gate)
            {
                KeyValuePair<ChatResult, TaskCompletionSource<ChatResult>> chat;
                if (!chats.TryGetValue(id, out chat)) return;
                chats.Remove(id);
                var r = chat.Key;
                r.Done = false;
                r.Code = code;
                r.Message = message;
                EndChat(r, chat.Value);
            }
        }

        private bool DispatchVoice(JsonObject frame)
        {
            string type = frame.Str("type"), id = frame.Str("id");
            if (type == "voice.transcript")
            {
                string text = frame.Str("text") ?? "";
                bool final = frame["final"] is bool && (bool)frame["final"];
                Post(() => { var f = OnTranscript; if (f != null) f(id, text, final); });
                return true;
            }
            if (type == "voice.error")
            {
                string code = frame.Str("code"), message = frame.Str("message");
                Post(() => { var f = OnVoiceError; if (f != null) f(id, code, message); });
                if (id != null && !VoiceGoesOn.Contains(code)) EndVoice(id, code, message);
                return true;
            }
            if (type == "voice.speech")
            {
                int seq = frame["seq"] is long ? (int)(long)frame["seq"] : 0;
                int rate = frame["rate"] is long ? (int)(long)frame["rate"] : 16000;
                string text = frame.Str("text");
                byte[] pcm;
                try { pcm = Convert.FromBase64String(frame.Str("data") ?? ""); }
                catch (FormatException) { return true; }
                Post(() => { var f = OnSpeech; if (f != null) f(id, seq, text, rate, pcm); });
                return true;
            }
            return false;
        }
    }
}
