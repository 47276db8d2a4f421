// Stand-ins of exactly the Oxygen Not Included, Harmony and Unity API surface examples/oni/XtyMod.cs
// uses, so CI compiles the example without the game (its DLLs cannot be fetched here). Shapes
// follow KMod.UserMod2 (OnLoad(Harmony), path), UnityEngine's GameObject/MonoBehaviour and
// ONI's SaveGame/GameClock; the bodies are not the game's. A real build references
// Assembly-CSharp.dll, Assembly-CSharp-firstpass.dll, 0Harmony.dll and UnityEngine*.dll from
// the game's OxygenNotIncluded_Data/Managed folder instead of this file.
using System;
using System.Collections.Generic;

namespace HarmonyLib
{
    public class Harmony { public Harmony(string id) { Id = id; } public string Id { get; private set; } }
}

namespace KMod
{
    public class UserMod2
    {
        public string path;
        public virtual void OnLoad(HarmonyLib.Harmony harmony) { }
    }

    public static class Manager
    {
        /// <summary>The game's mods folder (Documents/Klei/OxygenNotIncluded/mods); a mod's own
        /// folder is below it (Steam/&lt;id&gt;, Local/&lt;name&gt;), and mods/config is shared.</summary>
        public static string GetDirectory() { return Environment.GetEnvironmentVariable("ONI_MODS") ?? "mods"; }
    }
}

namespace UnityEngine
{
    public class Object
    {
        public static void DontDestroyOnLoad(Object target) { }
    }

    public struct Vector3
    {
        public float x, y, z;
        public Vector3(float x, float y, float z) { this.x = x; this.y = y; this.z = z; }
    }

    public class Transform { public Vector3 position; }

    public class Component : Object
    {
        public GameObject gameObject { get; internal set; }
        public readonly Transform transform = new Transform();
        // Stand-in: the components a real GameObject holds, by type.
        public readonly List<Component> Siblings = new List<Component>();
        public T GetComponent<T>() where T : Component
        {
            if (this is T) return (T)this;
            foreach (var c in Siblings) if (c is T) return (T)c;
            return null;
        }
    }

    /// <summary>Unity calls a behaviour's Update() once a frame, on the main thread.</summary>
    public class MonoBehaviour : Component { }

    public sealed class GameObject : Object
    {
        public readonly List<Component> Components = new List<Component>();
        public string name;
        // Stand-in: every GameObject made, so a test's host can find the mod's and drive its Update().
        public static readonly List<GameObject> All = new List<GameObject>();
        public GameObject(string name) { this.name = name; All.Add(this); }
        public T AddComponent<T>() where T : Component, new()
        {
            var c = new T { gameObject = this };
            Components.Add(c);
            return c;
        }
    }

    public static class Debug
    {
        public static void Log(object message) { Console.WriteLine(message); }
        public static void LogWarning(object message) { Console.WriteLine(message); }
    }
}

public class SaveGame : UnityEngine.MonoBehaviour
{
    public static SaveGame Instance;
    public string BaseName;
}

/// <summary>A game setting (ONI's SettingConfig); WorldgenSeed is the one holding the world seed.</summary>
public class SettingConfig { public string id; public SettingConfig(string id) { this.id = id; } }

/// <summary>One setting's value: for WorldgenSeed, id is the seed as text ("1845874684").</summary>
public class SettingLevel { public string id; }

public static class CustomGameSettingConfigs
{
    public static readonly SettingConfig WorldgenSeed = new SettingConfig("WorldgenSeed");
}

/// <summary>The loaded save's game settings (ONI keeps them in the save).</summary>
public class CustomGameSettings : UnityEngine.MonoBehaviour
{
    public static CustomGameSettings Instance;
    public readonly Dictionary<string, string> Levels = new Dictionary<string, string>();
    public SettingLevel GetCurrentQualitySetting(SettingConfig setting)
    {
        string id;
        return new SettingLevel { id = Levels.TryGetValue(setting.id, out id) ? id : "0" };
    }
}

public class GameClock : UnityEngine.MonoBehaviour
{
    public static GameClock Instance;
    public int cycle;
    public int GetCycle() { return cycle; }
}

public struct Tag
{
    public string Name;
    public string DisplayName;
    public Tag(string name, string shown) { Name = name; DisplayName = shown; }
}

public static class TagExtensions
{
    /// <summary>The tag's name as the game shows it, in the player's language.</summary>
    public static string ProperName(this Tag tag) { return tag.DisplayName ?? tag.Name; }
}

public class KSelectable : UnityEngine.MonoBehaviour
{
    public Tag prefab;
    public Tag PrefabID() { return prefab; }
}

public class SelectTool : UnityEngine.MonoBehaviour
{
    public static SelectTool Instance;
    public KSelectable selected;
}

public static class TransformExtensions
{
    public static UnityEngine.Vector3 GetPosition(this UnityEngine.Transform t) { return t.position; }
}

public class CameraController : UnityEngine.MonoBehaviour
{
    public static CameraController Instance;
    public UnityEngine.Vector3 Target;   // stand-in: where SetTargetPos moved the camera
    public void SetTargetPos(UnityEngine.Vector3 pos, float orthographic_size, bool playSound) { Target = pos; }
}

public class MinionIdentity : UnityEngine.MonoBehaviour
{
    public string name;
    public string GetProperName() { return name; }
}

public static class Components
{
    public class Cmps<T> { public readonly List<T> Items = new List<T>(); }
    public static readonly Cmps<MinionIdentity> LiveMinionIdentities = new Cmps<MinionIdentity>();
}

public static class PriorityScreen
{
    public enum PriorityClass { idle = -1, basic = 0, high = 1, personalNeeds = 2, topPriority = 3, compulsory = 4 }
}

public struct PrioritySetting
{
    public PriorityScreen.PriorityClass priority_class;
    public int priority_value;
    public PrioritySetting(PriorityScreen.PriorityClass priority_class, int priority_value)
    {
        this.priority_class = priority_class;
        this.priority_value = priority_value;
    }
}

public class Prioritizable : UnityEngine.MonoBehaviour
{
    public PrioritySetting setting;
    public PrioritySetting GetMasterPriority() { return setting; }
    public void SetMasterPriority(PrioritySetting priority) { setting = priority; }
}

// -- what the example's game events read (v1.md "game.event") ----------------------------------

/// <summary>One amount of one creature (breath, calories...): value now and its maximum.</summary>
public class AmountInstance
{
    public float value;
    public float max = 100f;
    public float GetMax() { return max; }
}

public class Amount
{
    public readonly Dictionary<UnityEngine.Component, AmountInstance> Instances = new Dictionary<UnityEngine.Component, AmountInstance>();   // stand-in only
    public AmountInstance Lookup(UnityEngine.Component cmp)
    {
        AmountInstance found;
        return Instances.TryGetValue(cmp, out found) ? found : null;
    }
}

public class Amounts { public readonly Amount Breath = new Amount(); }

public class Db
{
    private static readonly Db Instance = new Db();
    public readonly Amounts Amounts = new Amounts();
    public static Db Get() { return Instance; }
}

public class WorldInventory : UnityEngine.MonoBehaviour { }

public class WorldContainer : UnityEngine.MonoBehaviour { public WorldInventory worldInventory = new WorldInventory(); }

public class ClusterManager : UnityEngine.MonoBehaviour
{
    public static ClusterManager Instance;
    public WorldContainer activeWorld;
}

/// <summary>The colony's food: CountRations gives the calories (1 kcal = 1000) a world holds.</summary>
public class RationTracker
{
    private static readonly RationTracker Instance = new RationTracker();
    public float Calories;   // stand-in only
    public static RationTracker Get() { return Instance; }
    public float CountRations(Dictionary<string, float> unitCountByFoodType, WorldInventory inventory, bool excludeUnreachable = true) { return Calories; }
}
