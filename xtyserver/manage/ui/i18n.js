"use strict";
// Every text the page shows, Chinese first. app.js reads window.XTY_TEXTS.
// gameName: the readable names of the games (the Chinese ones as in xtyserver/memory/game_names.py);
// a game not listed here is shown by its id.
window.XTY_TEXTS = {
  zh: {
    title: "小汤圆的记忆", tabMemory: "记忆", tabStats: "游玩统计", switchLang: "English", switchLangLabel: "Switch to English",
    skip: "跳到正文", tabs: "页面",
    shared: "共享记忆", autoShared: "自动形成共享记忆", games: "游戏记忆",
    statsGames: "每个游戏", statsChart: "最近 30 天每天的游玩时间", statsSaves: "每个存档", statsTokens: "每天的 token 用量", date: "日期", calls: "调用次数", promptTokens: "输入 token", completionTokens: "输出 token", noTokens: "还没有用过模型",
    confirmTitle: "确认删除", statsKept: "游玩统计不会被删除。", cancel: "取消", confirmDelete: "删除",
    edit: "修改", save: "保存", delete: "删除", pin: "置顶", unpin: "取消置顶",
    clearSave: "清空这个存档", clearGame: "清空这个游戏",
    unnamed: "未命名存档", noName: "（游戏没有提供存档名）",
    empty: "（空）", noEvents: "这个存档还没有记忆。", noGames: "还没有游戏记忆。", noMatch: "没有符合条件的记忆。",
    game: "游戏", saveCol: "存档", days: "天数", sessions: "次数", active: "游玩时间", last: "最后游玩",
    willDelete: "将删除以下内容：", willReset: "将清空共享记忆的这一项：", items: "条记忆",
    needLink: "请用 xtyserver serve 打印的链接打开本页，或运行 xtyserver ui。",
    saved: "已保存。", deleted: "已删除。", failed: "操作失败：",
    search: "搜索记忆", searchHint: "输入词语，中文或英文", filters: "搜索和筛选",
    fGame: "游戏", fSave: "存档", fKind: "类型", fStatus: "状态", fClear: "清除筛选",
    allGames: "全部游戏", allSaves: "全部存档", allKinds: "全部类型", allStatus: "全部状态",
    count: (shown, total) => `显示 ${shown} / ${total} 条记忆`,
    timeline: "时间线（游戏内天数）", timelineOf: (save) => `${save} 的时间线`, noDays: "还没有带游戏内天数的记忆。",
    day: (n) => `第 ${n} 天`,
    exportAll: "导出全部", exportSave: "导出这个存档", exported: "已导出：",
    fileAll: "小汤圆记忆-全部", filePrefix: "小汤圆记忆",
    chartOf: (game) => `${game}：最近 30 天每天的游玩时间`,
    gameName: { "stardew-valley": "星露谷物语", "dont-starve-together": "饥荒联机版", "oxygen-not-included": "缺氧", "minecraft": "我的世界", "terraria": "泰拉瑞亚" },
    status: { active: "进行中", done: "已完成", dropped: "已放弃" },
    kind: { goal: "目标", decision: "决定", promise: "约定", relationship: "关系", milestone: "里程碑", event: "事件" },
    field: {
      nickname: "昵称", language: "语言", replyStyle: "回复风格", personality: "性格", hobbies: "爱好",
      games: "一起玩过的游戏", companionName: "小汤圆的名字", companionPersona: "小汤圆的设定", notes: "备注"
    },
    hours: (h, m) => `${h} 小时 ${m} 分`
  },
  en: {
    title: "XiaoTangYuan's memory", tabMemory: "Memory", tabStats: "Play statistics", switchLang: "中文", switchLangLabel: "切换到中文",
    skip: "Skip to content", tabs: "Views",
    shared: "Shared memory", autoShared: "Form shared memory automatically", games: "Game memory",
    statsGames: "Per game", statsChart: "Active time per day, last 30 days", statsSaves: "Per save", statsTokens: "Tokens per day", date: "Date", calls: "Calls", promptTokens: "Prompt tokens", completionTokens: "Completion tokens", noTokens: "No model calls yet",
    confirmTitle: "Confirm deletion", statsKept: "Play statistics are kept.", cancel: "Cancel", confirmDelete: "Delete",
    edit: "Edit", save: "Save", delete: "Delete", pin: "Pin", unpin: "Unpin",
    clearSave: "Clear this save", clearGame: "Clear this game",
    unnamed: "Unnamed save", noName: "(the game sent no save name)",
    empty: "(empty)", noEvents: "No memories in this save yet.", noGames: "No game memories yet.", noMatch: "No memories match.",
    game: "Game", saveCol: "Save", days: "Days", sessions: "Sessions", active: "Active time", last: "Last played",
    willDelete: "This will delete:", willReset: "This will clear this shared field:", items: "memories",
    needLink: "Open this page with the link xtyserver serve printed, or run xtyserver ui.",
    saved: "Saved.", deleted: "Deleted.", failed: "Failed: ",
    search: "Search memory", searchHint: "Words, in Chinese or English", filters: "Search and filters",
    fGame: "Game", fSave: "Save", fKind: "Kind", fStatus: "Status", fClear: "Clear filters",
    allGames: "All games", allSaves: "All saves", allKinds: "All kinds", allStatus: "Any status",
    count: (shown, total) => `Showing ${shown} of ${total} memories`,
    timeline: "Timeline (in-game days)", timelineOf: (save) => `Timeline of ${save}`, noDays: "No memories with an in-game day yet.",
    day: (n) => `Day ${n}`,
    exportAll: "Export everything", exportSave: "Export this save", exported: "Exported: ",
    fileAll: "xiaotangyuan-memory-all", filePrefix: "xiaotangyuan-memory",
    chartOf: (game) => `${game}: active time per day, last 30 days`,
    gameName: { "stardew-valley": "Stardew Valley", "dont-starve-together": "Don't Starve Together", "oxygen-not-included": "Oxygen Not Included", "minecraft": "Minecraft", "terraria": "Terraria" },
    status: { active: "active", done: "done", dropped: "dropped" },
    kind: { goal: "goal", decision: "decision", promise: "promise", relationship: "relationship", milestone: "milestone", event: "event" },
    field: {
      nickname: "Nickname", language: "Language", replyStyle: "Reply style", personality: "Personality",
      hobbies: "Hobbies", games: "Games played together", companionName: "Companion's name",
      companionPersona: "Companion's persona", notes: "Notes"
    },
    hours: (h, m) => `${h} h ${m} min`
  }
};
