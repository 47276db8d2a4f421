// Test driver for the C# client's game events (tests/adapter/test_speakup_csharp.py), no server:
// EventEdges over a condition held, dropped and held again, and ReportEventAsync's local checks.
//   mono EventsProbe.exe        (prints one line per check)
using System;
using System.Collections.Generic;
using XiaoTangYuan.Adapter;

public static class EventsProbe
{
    private static string Refusal(XtyClient client, string kind, JsonObject facts)
    {
        try { client.ReportEventAsync(kind, facts); return "sent"; }
        catch (XtyRefusedException e) { return e.Code + " " + string.Join(",", e.Fields.ToArray()) + (e.Local ? " local" : ""); }
    }

    public static int Main()
    {
        var edges = new EventEdges();
        var seen = new List<string>();
        foreach (var low in new[] { false, true, true, true, false, true, true })
            seen.Add(edges.Rose("stamina_low", low) ? "R" : ".");
        Console.WriteLine("edges " + string.Join("", seen.ToArray()));
        var identity = new JsonObject().Add("gameId", "stardew-valley").Add("saveId", "farm-a");
        var client = new XtyClient(new Uri("ws://127.0.0.1:9/v1"), "t", identity, "probe", "0", null);
        Console.WriteLine("kind " + Refusal(client, "dragon_near", null));
        Console.WriteLine("subject " + Refusal(client, "boss_near", new JsonObject().Add("subject", new string('鹿', 201))));
        var big = new JsonObject().Add("subject", new string('鹿', 200)).Add("place", new string('林', 200));
        Console.WriteLine("facts " + Refusal(client, "boss_near", big));
        return 0;
    }
}
