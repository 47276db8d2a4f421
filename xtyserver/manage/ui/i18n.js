"use strict";
// Every text the page shows, Chinese first. app.js reads window.XTY_TEXTS.
window.XTY_TEXTS = {
  zh: {
    title: "小汤圆的记忆", tabMemory: "记忆", tabStats: "游玩统计", switchLang: "English",
    shared: "共享记忆", autoShared: "自动形成共享记忆", games: "游戏记忆",
    statsGames: "每个游戏", statsChart: "最近 30 天每天的游玩时间", statsSaves: "每个存档", statsTokens: "每天的 token 用量", date: "日期", calls: "调用次数", promptTokens: "输入 token", completionTokens: "输出 token", noTokens: "还没有用过模型",
    confirmTitle: "确认删除", statsKept: "游玩统计不会被删除。", cancel: "取消", confirmDelete: "删除",
    edit: "修改", save: "保存", delete: "删除", pin: "置顶", unpin: "取消置顶",
    clearSave: "清空这个存档", clearGame: "清空这个游戏", noName: "（没有存档名，显示编号）",
    empty: "（空）", noEvents: "这个存档还没有记忆。", noGames: "还没有游戏记忆。",
    game: "游戏", saveCol: "存档", days: "天数", sessions: "次数", active: "游玩时间", last: "最后游玩",
    willDelete: "将删除以下内容：", willReset: "将清空共享记忆的这一项：", items: "条记忆",
    needLink: "请用 xtyserver serve 打印的链接打开本页，或运行 xtyserver ui。",
    saved: "已保存。", deleted: "已删除。", failed: "操作失败：",
    status: { active: "进行中", done: "已完成", dropped: "已放弃" },
    kind: { goal: "目标", decision: "决定", promise: "约定", relationship: "关系", milestone: "里程碑", event: "事件" },
    field: {
      nickname: "昵称", language: "语言", replyStyle: "回复风格", personality: "性格", hobbies: "爱好",
      games: "一起玩过的游戏", companionName: "小汤圆的名字", companionPersona: "小汤圆的设定", notes: "备注"
    },
    hours: (h, m) => `${h} 小时 ${m} 分`
  },
  en: {
    title: "XiaoTangYuan's memory", tabMemory: "Memory", tabStats: "Play statistics", switchLang: "中文",
    shared: "Shared memory", autoShared: "Form shared memory automatically", games: "Game memory",
    statsGames: "Per game", statsChart: "Active time per day, last 30 days", statsSaves: "Per save", statsTokens: "Tokens per day", date: "Date", calls: "Calls", promptTokens: "Prompt tokens", completionTokens: "Completion tokens", noTokens: "No model calls yet",
    confirmTitle: "Confirm deletion", statsKept: "Play statistics are kept.", cancel: "Cancel", confirmDelete: "Delete",
    edit: "Edit", save: "Save", delete: "Delete", pin: "Pin", unpin: "Unpin",
    clearSave: "Clear this save", clearGame: "Clear this game", noName: "(no save name; shown by id)",
    empty: "(empty)", noEvents: "No memories in this save yet.", noGames: "No game memories yet.",
    game: "Game", saveCol: "Save", days: "Days", sessions: "Sessions", active: "Active time", last: "Last played",
    willDelete: "This will delete:", willReset: "This will clear this shared field:", items: "memories",
    needLink: "Open this page with the link xtyserver serve printed, or run xtyserver ui.",
    saved: "Saved.", deleted: "Deleted.", failed: "Failed: ",
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
