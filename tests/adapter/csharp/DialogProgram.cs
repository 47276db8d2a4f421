// Test driver: chat, answer the server's confirmation dialog with yes, print the notice.
using System;
using System.IO;
using System.Threading;
using XiaoTangYuan.Adapter;

static class DialogProgram
{
    static int Main(string[] args)
    {
        var identity = new JsonObject().Add("gameId", "stardew-valley").Add("saveId", "farm-a");
        var client = new XtyClient(new Uri(args[0]), File.ReadAllText(args[1]).Trim(), identity, "xty-test", "0.1.0", "Asia/Shanghai");
        var asked = new ManualResetEventSlim();
        var noticed = new ManualResetEventSlim();
        JsonObject request = null;
        client.OnConfirmRequest = r => { request = r; asked.Set(); };
        client.OnNotice = n => { Console.WriteLine("notice " + n.Str("action") + " " + n.Str("target") + ": " + n.Str("text")); noticed.Set(); };
        client.ConnectAsync().Wait();
        var reply = client.ChatAsync("把共同记忆清空", null, null, null).Result;
        Console.WriteLine("done " + reply.Done + ": " + reply.Text.Replace("\n", " "));
        if (!Until(client, asked)) { Console.WriteLine("no confirm request"); return 1; }
        Console.WriteLine("question " + request.Str("question"));
        var forgotten = client.AnswerConfirmAsync(request.Str("confirmId"), true).Result;
        Console.WriteLine("answer " + forgotten.Str("type") + " " + forgotten.Str("target"));
        if (!Until(client, noticed)) { Console.WriteLine("no notice"); return 1; }
        client.CloseAsync().Wait();
        return 0;
    }

    // The game's tick: the client's events arrive through Poll() (README "Game loops").
    static bool Until(XtyClient client, ManualResetEventSlim done)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        while (DateTime.UtcNow < deadline)
        {
            client.Poll();
            if (done.Wait(TimeSpan.FromMilliseconds(15))) return true;
        }
        return false;
    }
}
