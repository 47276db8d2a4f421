// Generated from xtyserver/adapter/projection.json by scripts/gen_adapter_rules.py;
// do not edit (tests/adapter/test_reference_adapters.py keeps it equal).
namespace XiaoTangYuan.Adapter
{
    public static class ProjectionRules
    {
        public const string Text = @"{
  ""version"": 1,
  ""targetBytes"": 2048,
  ""maxBytes"": 6144,
  ""maxNearby"": 5,
  ""maxItems"": 8,
  ""maxStatus"": 8,
  ""maxStringChars"": 200,
  ""always"": [""world.day"", ""world.location"", ""world.time"", ""world.season"", ""ui.busy"", ""ui.menu""],
  ""general"": {
    ""fields"": [""player.heldItem"", ""player.health"", ""player.stamina"", ""player.status"", ""world.weather"", ""focus.kind"", ""focus.name"", ""focus.reachable""],
    ""nearby"": 3,
    ""items"": 4
  },
  ""games"": {
    ""stardew-valley"": [
      {""topic"": ""fishing"",
       ""words"": [""fish"", ""rod"", ""bait"", ""pond"", ""river"", ""ocean"", ""lake"", ""tackle"", ""crab pot"", ""钓"", ""鱼"", ""竿"", ""饵"", ""池塘"", ""河"", ""海""],
       ""fields"": [""focus.kind"", ""focus.name"", ""focus.reachable"", ""player.heldItem"", ""player.stamina"", ""world.weather""],
       ""kinds"": [""water"", ""fish""],
       ""match"": [""rod"", ""pole"", ""bait"", ""tackle"", ""fish"", ""crab pot"", ""鱼"", ""竿"", ""饵""]},
      {""topic"": ""farming"",
       ""words"": [""crop"", ""plant"", ""seed"", ""harvest"", ""sprinkler"", ""fertili"", ""种"", ""作物"", ""种子"", ""浇水"", ""收获"", ""洒水"", ""肥"", ""庄稼""],
       ""fields"": [""world.weather"", ""player.heldItem"", ""player.stamina"", ""focus.kind"", ""focus.name""],
       ""kinds"": [""crop"", ""soil"", ""tree"", ""animal""],
       ""match"": [""seed"", ""crop"", ""watering can"", ""hoe"", ""sprinkler"", ""fertilizer"", ""种子"", ""水壶"", ""锄"", ""洒水器"", ""肥""]},
      {""topic"": ""villagers"",
       ""words"": [""gift"", ""villager"", ""friend"", ""birthday"", ""heart"", ""love"", ""marry"", ""date"", ""npc"", ""礼物"", ""送"", ""村民"", ""好感"", ""生日"", ""喜欢"", ""结婚"", ""约会"", ""朋友""],
       ""fields"": [""focus.kind"", ""focus.name"", ""player.heldItem"", ""world.time""],
       ""kinds"": [""npc"", ""villager""],
       ""match"": [""gift"", ""bouquet"", ""礼物""]},
      {""topic"": ""mining"",
       ""words"": [""mine"", ""mining"", ""ore"", ""cave"", ""floor"", ""pickaxe"", ""geode"", ""monster"", ""slime"", ""矿"", ""洞"", ""层"", ""镐"", ""晶球"", ""怪""],
       ""fields"": [""player.health"", ""player.stamina"", ""player.status"", ""player.heldItem"", ""focus.kind"", ""focus.name""],
       ""kinds"": [""monster"", ""ore"", ""rock"", ""ladder""],
       ""match"": [""pickaxe"", ""sword"", ""bomb"", ""ore"", ""geode"", ""food"", ""镐"", ""剑"", ""炸弹"", ""矿"", ""晶球""]},
      {""topic"": ""money"",
       ""words"": [""money"", ""gold"", ""sell"", ""price"", ""profit"", ""buy"", ""cost"", ""shop"", ""钱"", ""金"", ""卖"", ""价"", ""赚"", ""买"", ""商店"", ""收益""],
       ""fields"": [""player.heldItem"", ""ui.menu"", ""focus.kind"", ""focus.name""],
       ""kinds"": [""shop"", ""shipping bin""],
       ""match"": [""gold"", ""coin"", ""artisan"", ""wine"", ""cheese"", ""钱"", ""金""]}
    ],
    ""dont-starve-together"": [
      {""topic"": ""danger"",
       ""words"": [""danger"", ""monster"", ""attack"", ""fight"", ""hound"", ""spider"", ""boss"", ""die"", ""dying"", ""run"", ""safe"", ""kill"", ""危险"", ""怪"", ""攻击"", ""打"", ""猎犬"", ""蜘蛛"", ""死"", ""跑"", ""安全"", ""救""],
       ""fields"": [""player.health"", ""player.status"", ""player.heldItem"", ""focus.kind"", ""focus.name""],
       ""kinds"": [""monster"", ""hostile"", ""boss""],
       ""match"": [""spear"", ""armor"", ""helmet"", ""weapon"", ""healing"", ""矛"", ""甲"", ""头盔"", ""武器"", ""治疗""]},
      {""topic"": ""food"",
       ""words"": [""food"", ""hungry"", ""hunger"", ""eat"", ""cook"", ""crock"", ""meat"", ""berry"", ""starv"", ""食物"", ""饿"", ""吃"", ""饥饿"", ""做饭"", ""烹饪"", ""锅"", ""肉"", ""浆果""],
       ""fields"": [""player.stamina"", ""player.status"", ""player.heldItem"", ""focus.kind"", ""focus.name""],
       ""kinds"": [""food"", ""crockpot"", ""bush"", ""animal""],
       ""match"": [""meat"", ""berr"", ""carrot"", ""seed"", ""food"", ""morsel"", ""crock"", ""肉"", ""浆果"", ""胡萝卜"", ""种子"", ""食""]},
      {""topic"": ""sanity"",
       ""words"": [""sanity"", ""insane"", ""crazy"", ""mind"", ""shadow"", ""flower"", ""理智"", ""精神"", ""疯"", ""影怪"", ""花""],
       ""fields"": [""player.status"", ""player.health"", ""player.heldItem"", ""world.time""],
       ""kinds"": [""shadow"", ""flower"", ""monster""],
       ""match"": [""flower"", ""petal"", ""garland"", ""taffy"", ""tam o"", ""花"", ""花环"", ""太妃""]},
      {""topic"": ""base"",
       ""words"": [""base"", ""build"", ""camp"", ""fire"", ""chest"", ""science"", ""structure"", ""home"", ""基地"", ""建"", ""营地"", ""火"", ""箱子"", ""科学"", ""家""],
       ""fields"": [""focus.kind"", ""focus.name"", ""player.heldItem""],
       ""kinds"": [""building"", ""structure"", ""fire""],
       ""match"": [""log"", ""rock"", ""grass"", ""twig"", ""gold"", ""board"", ""木"", ""石"", ""草"", ""树枝"", ""金""]},
      {""topic"": ""season"",
       ""words"": [""season"", ""winter"", ""summer"", ""spring"", ""autumn"", ""cold"", ""freeze"", ""hot"", ""overheat"", ""rain"", ""季节"", ""冬"", ""夏"", ""春"", ""秋"", ""冷"", ""冻"", ""热"", ""雨""],
       ""fields"": [""world.weather"", ""player.status"", ""player.health"", ""player.heldItem""],
       ""kinds"": [""fire"", ""building""],
       ""match"": [""thermal"", ""puffy"", ""winter hat"", ""umbrella"", ""ice"", ""暖石"", ""冬帽"", ""伞"", ""冰""]}
    ],
    ""oxygen-not-included"": [
      {""topic"": ""oxygen"",
       ""words"": [""oxygen"", ""o2"", ""air"", ""breath"", ""co2"", ""suffocat"", ""algae"", ""氧"", ""空气"", ""呼吸"", ""二氧化碳"", ""窒息"", ""藻""],
       ""fields"": [""player.status"", ""focus.kind"", ""focus.name""],
       ""kinds"": [""building"", ""gas""],
       ""match"": [""oxygen"", ""algae"", ""oxylite"", ""electrolyzer"", ""diffuser"", ""氧"", ""藻""]},
      {""topic"": ""food"",
       ""words"": [""food"", ""hungry"", ""eat"", ""kcal"", ""calorie"", ""meal"", ""farm"", ""食物"", ""饿"", ""吃"", ""卡路里"", ""饭"", ""种植""],
       ""fields"": [""player.status"", ""focus.kind"", ""focus.name""],
       ""kinds"": [""building"", ""plant"", ""critter""],
       ""match"": [""meal"", ""lice"", ""berry"", ""kcal"", ""food"", ""bristle"", ""饭"", ""米虱"", ""莓"", ""食""]},
      {""topic"": ""stress"",
       ""words"": [""stress"", ""morale"", ""happy"", ""sad"", ""decor"", ""break"", ""压力"", ""士气"", ""开心"", ""装饰"", ""崩溃""],
       ""fields"": [""player.status"", ""focus.kind"", ""focus.name""],
       ""kinds"": [""duplicant"", ""building""],
       ""match"": [""decor"", ""massage"", ""art"", ""装饰"", ""按摩""]},
      {""topic"": ""power"",
       ""words"": [""power"", ""electric"", ""battery"", ""generator"", ""watt"", ""circuit"", ""电"", ""电池"", ""发电"", ""瓦"", ""电路""],
       ""fields"": [""player.status"", ""focus.kind"", ""focus.name""],
       ""kinds"": [""building"", ""generator""],
       ""match"": [""battery"", ""generator"", ""wire"", ""coal"", ""电池"", ""发电"", ""电线"", ""煤""]},
      {""topic"": ""duplicants"",
       ""words"": [""duplicant"", ""dupe"", ""colonist"", ""skill"", ""job"", ""priority"", ""复制人"", ""小人"", ""技能"", ""工作"", ""优先""],
       ""fields"": [""focus.kind"", ""focus.name"", ""player.status""],
       ""kinds"": [""duplicant""],
       ""match"": []}
    ]
  }
}
";
    }
}
