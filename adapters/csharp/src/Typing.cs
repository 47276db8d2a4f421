// Typing hints (v1.md "chat.typing"): while the player types into the mod's chat box, the server
// may embed the question for its memory search before the chat.send comes, so the reply starts
// sooner. The mod hands over the draft as it stands, as often as it likes (every key, or every
// tick the box is open); TypingHints decides when a hint is worth a frame: once the draft has not
// changed for PauseMs (the player paused), only a draft not hinted already, and at most one per
// IntervalMs (a Chinese IME commits a phrase at a time, each commit followed by a pause: one
// embedding a second at most, never one per key). Poll() sends what is due, on the game's thread.
using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

namespace XiaoTangYuan.Adapter
{
    /// <summary>When a draft becomes a chat.typing hint: decisions only, on the caller's clock
    /// (milliseconds), no I/O.</summary>
    public sealed class TypingHints
    {
        /// <summary>The draft must stay unchanged this long before it is hinted (v1.md: "say 300 ms
        /// after the last key").</summary>
        public int PauseMs = 300;
        /// <summary>At least this long between two hints: over T ms, at most 1 + T / IntervalMs hints.</summary>
        public int IntervalMs = 1000;

        /// <summary>The last draft Due returned (null before the first).</summary>
        public string LastHint { get; private set; }

        private string draft, hinted;
        private long changedAt, hintedAt;
        private bool everHinted;

        /// <summary>The draft as it stands at now (the same text again is no change).</summary>
        public void Typed(string text, long now)
        {
            if (text == draft) return;
            draft = text;
            changedAt = now;
        }

        /// <summary>The draft to hint at now, or null; a draft returned is not returned again.</summary>
        public string Due(long now)
        {
            if (draft == null || draft == hinted || now - changedAt < PauseMs) return null;
            if (everHinted && now - hintedAt < IntervalMs) return null;
            // The server takes 1 to 2,000 chars (as chat.send's text); a blank or longer draft has
            // nothing to embed early, and the chat.send itself says what is wrong with it.
            if (draft.Trim().Length == 0 || Budget.Chars(draft) > Budget.ChatTextMaxChars) return null;
            hinted = draft;
            LastHint = draft;
            hintedAt = now;
            everHinted = true;
            return draft;
        }

        /// <summary>The draft was sent (or the box closed): nothing of it is hinted any more.</summary>
        public void Clear()
        {
            draft = null;
            hinted = null;
        }
    }

    public sealed partial class XtyClient
    {
        private static readonly Stopwatch Since = Stopwatch.StartNew();

        /// <summary>Milliseconds on a monotonic clock, for the typing hints' pauses (tests inject one).</summary>
        public Func<long> Clock = () => Since.ElapsedMilliseconds;

        /// <summary>When a draft is hinted (PauseMs, IntervalMs).</summary>
        public readonly TypingHints Typing = new TypingHints();

        private readonly object typingGate = new object();
        private int typingSent;

        /// <summary>chat.typing frames queued so far.</summary>
        public int TypingHintsSent { get { return Volatile.Read(ref typingSent); } }

        /// <summary>The player is typing draft into the mod's chat box: call it on every key or on
        /// every tick the box is open (it never waits and never throws). Poll() sends the draft as
        /// a chat.typing hint once the player paused (Typing.PauseMs), at most one a
        /// Typing.IntervalMs, never the same draft twice; ChatAsync ends it. Nothing is sent while
        /// no session is open. The hint has no answer (a refusal goes to OnError).</summary>
        public void ChatTyping(string draft)
        {
            lock (typingGate) Typing.Typed(draft, Clock());
        }

        // From Poll(): the hint that is due, queued behind the frames before it.
        private void HintTyping()
        {
            if (ServerHello == null) return;
            string due;
            lock (typingGate) due = Typing.Due(Clock());
            if (due == null) return;
            Interlocked.Increment(ref typingSent);
            var frame = new JsonObject().Add("type", "chat.typing").Add("text", due);
            // A hint that cannot go (no session, the outbox full) is worth nothing later: dropped.
            Send(Json.Write(frame), false).ContinueWith(t => { var e = t.Exception; }, TaskContinuationOptions.OnlyOnFaulted);
        }

        // The turn is sent: its draft is not hinted after it.
        private void EndTyping()
        {
            lock (typingGate) Typing.Clear();
        }
    }
}
