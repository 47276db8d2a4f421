// The server's confirmation question and its announcements (v1.md "memory.confirm.request",
// "memory.confirm", "memory.notice"): show the question as a dialog, answer it, show each notice.
using System;
using System.Threading.Tasks;

namespace XiaoTangYuan.Adapter
{
    public sealed partial class XtyClient
    {
        /// <summary>Called (from Poll(), on the game's thread) with each memory.confirm.request: the companion previewed a forget.
        /// Show its "question" (and "saves", "itemCount") as a dialog; answer with AnswerConfirmAsync.</summary>
        public Action<JsonObject> OnConfirmRequest;
        /// <summary>Called (from Poll()) with each memory.notice: something was deleted or restored. Show its "text"
        /// (what went, how to undo, until when).</summary>
        public Action<JsonObject> OnNotice;

        private bool DispatchMemory(JsonObject frame)
        {
            string type = frame.Str("type");
            Action<JsonObject> handler = type == "memory.confirm.request" ? OnConfirmRequest
                : type == "memory.notice" ? OnNotice : null;
            if (type != "memory.confirm.request" && type != "memory.notice") return false;
            // Delivered on the game's tick by Poll(), like every other event.
            if (handler != null) Post(() => handler(frame));
            return true;
        }

        /// <summary>The player answered the dialog of confirmId. Yes: returns the memory.forgotten
        /// (or the error refusing it); no: returns null (a no has no answer; the token is void).</summary>
        public async Task<JsonObject> AnswerConfirmAsync(string confirmId, bool yes)
        {
            var frame = new JsonObject().Add("type", "memory.confirm").Add("confirmId", confirmId)
                .Add("answer", yes ? "yes" : "no");
            if (!yes)
            {
                await SendRawAsync(Json.Write(frame)).ConfigureAwait(false);
                return null;
            }
            frame["id"] = NextId("confirm");
            return await RequestAsync(frame).ConfigureAwait(false);
        }
    }
}
