"use strict";
// The voice section of 设置 (docs/voice.md "The page"): voice on/off, microphone and speakers,
// what the player speaks, the speech model (download once, or a folder), spoken replies, the
// test button, and a light while the microphone is open. Its own file with its own texts,
// Chinese first; the page session and its API calls are app.js's (window.XTY_PAGE).
(() => {
  const $ = (id) => document.getElementById(id);
  const lang = () => (localStorage.getItem("xty-lang") === "en" ? "en" : "zh");
  const el = (...args) => window.XTY_PAGE.el(...args);
  const call = (...args) => window.XTY_PAGE.call(...args);
  const POLL_MS = 1000;
  const KEYS = ["voice.enabled", "voice.input_device", "voice.output_device", "voice.language", "voice.model",
    "voice.model_dir", "voice.speak", "voice.tts_voice", "voice.speed"];
  const MB = (bytes) => (bytes / 1048576).toFixed(0);

  const TEXTS = {
    zh: {
      title: "语音",
      why: "按住 mod 里的说话键对小汤圆说话，松开后它会回答并念出来。声音只在这台电脑上识别，录音不会保存、不会发给任何人，只有识别出的文字交给模型。",
      notInstalled: "语音组件还没有安装：在命令行运行 pip install \"xtyserver[voice]\"，然后重启 xtyserver。",
      enabled: "打开语音（mod 按住说话键时才录音）",
      mic: "麦克风", speaker: "扬声器（念回答用）", systemDefault: "系统默认",
      devicesOff: "打开语音并保存后，这里会列出这台电脑的麦克风和扬声器。",
      language: "我说的话", languages: { zh: "普通话（夹英文游戏名也可以）", yue: "粤语", en: "English", auto: "自动识别（较慢）" },
      model: "语音识别模型",
      models: { base: "base（已随语音组件安装，约 145 MB，最快）", small: "small（约 484 MB，中文更准，慢一些）",
        medium: "medium（约 1.5 GB，中文最准，要较快的电脑）", "large-v3-turbo": "large-v3-turbo（约 1.6 GB，准，要较快的电脑）" },
      notHere: "（未下载）",
      download: (m, mb) => `下载 ${m}（约 ${mb} MB，从 ModelScope 下载，只下载一次）`,
      downloading: (m, p, a, b) => `正在下载 ${m}：${p}%（${a} / ${b} MB）`,
      downloaded: (m) => `${m} 已下载并校验通过。`,
      modelDir: "或者用这个文件夹里的模型（faster-whisper 格式；留空则用上面选的）",
      status: { idle: "模型还没加载（第一次说话时加载）", loading: "正在加载模型…", ready: "模型已加载", failed: "模型加载失败" },
      speak: "念出回答", speed: "朗读速度（1 为正常）", voiceName: "朗读声音（名字的一部分；留空则按回答的语言选）",
      save: "保存语音设置", saved: "语音设置已保存，下一句话起生效。",
      test: "测试：录 3 秒，再念一句", testing: "正在录音，请对着麦克风说一句话…",
      heard: (t) => `听到：“${t}”`, heardNothing: "没有听到说话声。",
      micOpen: "● 麦克风正在录音", micClosed: "麦克风关闭（只在按住说话键或测试时录音）",
      help: "麦克风用不了时：没有找到麦克风——插上后在上面选它；被占用——关掉正在用麦克风的程序（语音聊天、录屏）；Windows 不允许——打开「设置 > 隐私和安全性 > 麦克风」，允许「桌面应用访问你的麦克风」。",
    },
    en: {
      title: "Voice",
      why: "Hold the mod's talk key to speak to XiaoTangYuan; when you let go it answers and reads the answer aloud. Speech is recognised on this PC only: the recording is never saved or sent anywhere, only the words go to the model.",
      notInstalled: "The voice extra is not installed: run pip install \"xtyserver[voice]\" and restart xtyserver.",
      enabled: "Voice on (the microphone records only while a mod's talk key is held)",
      mic: "Microphone", speaker: "Speakers (for spoken replies)", systemDefault: "System default",
      devicesOff: "Turn voice on and save: this PC's microphones and speakers are then listed here.",
      language: "I speak", languages: { zh: "Mandarin (English game names are fine)", yue: "Cantonese", en: "English", auto: "Detect (slower)" },
      model: "Speech recognition model",
      models: { base: "base (installed with the voice extra, about 145 MB, fastest)", small: "small (about 484 MB, better Chinese, slower)",
        medium: "medium (about 1.5 GB, best Chinese, needs a faster PC)", "large-v3-turbo": "large-v3-turbo (about 1.6 GB, good, needs a faster PC)" },
      notHere: " (not downloaded)",
      download: (m, mb) => `Download ${m} (about ${mb} MB from ModelScope, once)`,
      downloading: (m, p, a, b) => `Downloading ${m}: ${p}% (${a} / ${b} MB)`,
      downloaded: (m) => `${m} is downloaded and verified.`,
      modelDir: "Or use the model in this folder (faster-whisper format; empty: the one chosen above)",
      status: { idle: "Model not loaded (loaded when you first speak)", loading: "Loading the model…", ready: "Model loaded", failed: "The model failed to load" },
      speak: "Read replies aloud", speed: "Speaking speed (1 is normal)", voiceName: "Voice (part of its name; empty: by the reply's language)",
      save: "Save voice settings", saved: "Voice settings saved; they count from the next utterance.",
      test: "Test: record 3 s, then speak a line", testing: "Recording: say something into the microphone…",
      heard: (t) => `Heard: "${t}"`, heardNothing: "Heard no speech.",
      micOpen: "● The microphone is recording", micClosed: "Microphone closed (it records only while a talk key is held or during the test)",
      help: "If the microphone does not work: none found — plug it in and choose it above; busy — close the program using it (voice chat, screen recording); blocked by Windows — open Settings > Privacy & security > Microphone and allow desktop apps to use it.",
    },
  };
  const V = () => TEXTS[lang()];

  let values = {};   // the stored voice settings, as the settings view gave them
  let pinned = {};
  let drawnFor = ""; // the language the form was drawn in (drawn again when it changes)

  const option = (value, text, chosen) => {
    const o = el("option", { value }, text);
    if (value === chosen) o.selected = true;
    return o;
  };

  function field(key, input, label, check) {
    input.dataset.voiceKey = key;
    if (pinned[key]) input.disabled = true;
    return el("label", { class: check ? "check" : "" }, ...(check ? [input, " ", label] : [label, input]));
  }

  function deviceSelect(names, current) {
    const list = [...new Set([...(names || []), ...(current ? [current] : [])])];
    return el("select", {}, option("", V().systemDefault, current || ""), ...list.map((n) => option(n, n, current)));
  }

  // The form: drawn when the settings tab opens (or the language changes), never while the
  // player is editing it; the status lines below are redrawn on every poll.
  function draw(view) {
    const v = V();
    const box = $("voice-section");
    $("voice-title").textContent = v.title;
    const parts = [el("p", { class: "note" }, v.why)];
    if (!view.installed) {
      parts.push(el("p", { class: "note bad", id: "v-not-installed" }, v.notInstalled));
    }
    const on = el("input", { type: "checkbox", id: "v-enabled" });
    on.checked = !!values["voice.enabled"];
    parts.push(field("voice.enabled", on, v.enabled, true));
    if (view.devices) {
      parts.push(field("voice.input_device", deviceSelect(view.devices.inputs, values["voice.input_device"] || ""), v.mic));
      parts.push(field("voice.output_device", deviceSelect(view.devices.outputs, values["voice.output_device"] || ""), v.speaker));
    } else {
      parts.push(el("p", { class: "note" }, v.devicesOff));
    }
    const language = values["voice.language"] || "zh";
    parts.push(field("voice.language", el("select", { id: "v-language" }, ...Object.entries(v.languages).map(([k, t]) => option(k, t, language))), v.language));
    const model = values["voice.model"] || view.model || "base";
    const models = el("select", { id: "v-model" }, ...view.models.map((m) => option(m.name, (v.models[m.name] || m.name) + (m.present ? "" : v.notHere), model)));
    parts.push(field("voice.model", models, v.model));
    const fetchButton = el("button", { type: "button", id: "v-download" }, "");
    fetchButton.addEventListener("click", () => fetchModel(models.value));
    parts.push(el("div", { class: "actions" }, fetchButton));
    parts.push(el("p", { class: "note", id: "v-download-state", "aria-live": "polite" }));
    models.addEventListener("change", () => status(lastView));
    const folder = el("input", { type: "text", id: "v-model-dir", autocomplete: "off" });
    folder.value = values["voice.model_dir"] || "";
    parts.push(field("voice.model_dir", folder, v.modelDir));
    parts.push(el("p", { class: "note", id: "v-model-status" }));
    const speak = el("input", { type: "checkbox", id: "v-speak" });
    speak.checked = values["voice.speak"] !== false;
    parts.push(field("voice.speak", speak, v.speak, true));
    const speed = el("input", { type: "number", id: "v-speed", min: "0.5", max: "2", step: "0.1" });
    speed.value = values["voice.speed"] ?? 1;
    parts.push(field("voice.speed", speed, v.speed));
    const voiceName = el("input", { type: "text", id: "v-tts-voice", autocomplete: "off" });
    voiceName.value = values["voice.tts_voice"] || "";
    parts.push(field("voice.tts_voice", voiceName, v.voiceName));
    const save = el("button", { type: "button", id: "v-save" }, v.save);
    save.addEventListener("click", saveVoice);
    const test = el("button", { type: "button", id: "v-test" }, v.test);
    test.addEventListener("click", runTest);
    parts.push(el("div", { class: "actions" }, save, test));
    parts.push(el("p", { id: "v-mic", class: "note", "aria-live": "polite" }));
    parts.push(el("p", { id: "v-test-result", class: "note", "aria-live": "polite" }));
    parts.push(el("p", { class: "note", id: "v-help" }, v.help));
    box.replaceChildren(...parts);
    drawnFor = lang();
  }

  let lastView = null;

  // What changes by itself: the microphone light, the model's state, the download's progress.
  function status(view) {
    if (!view || !$("v-mic")) return;
    const v = V();
    lastView = view;
    $("v-mic").textContent = view.microphoneOpen ? v.micOpen : v.micClosed;
    $("v-mic").className = view.microphoneOpen ? "note bad" : "note";
    document.body.dataset.microphone = view.microphoneOpen ? "open" : "closed";
    $("v-model-status").textContent = v.status[view.status] || view.status;
    const chosen = $("v-model").value;
    const model = view.models.find((m) => m.name === chosen);
    const d = view.download;
    const button = $("v-download");
    button.hidden = !model || model.present || (d.state === "running" && d.model === chosen);
    if (model) button.textContent = v.download(chosen, model.megabytes);
    button.disabled = d.state === "running";
    let line = "";
    if (d.state === "running") line = v.downloading(d.model, d.total ? Math.floor((d.done * 100) / d.total) : 0, MB(d.done), MB(d.total));
    else if (d.state === "done") line = v.downloaded(d.model);
    else if (d.state === "failed") line = d.message || d.error;
    $("v-download-state").textContent = line;
    $("v-download-state").className = d.state === "failed" ? "note bad" : "note";
    document.body.dataset.voiceDownload = d.state;
  }

  function changes() {
    const out = {};
    for (const input of document.querySelectorAll("#voice-section [data-voice-key]")) {
      if (input.disabled) continue;
      const key = input.dataset.voiceKey;
      let value;
      if (input.type === "checkbox") value = input.checked;
      else if (input.type === "number") value = input.value.trim() === "" ? null : Number(input.value);
      else value = input.value.trim() === "" ? null : input.value.trim();
      const before = values[key] ?? (input.type === "checkbox" ? key === "voice.speak" : null);
      if (value !== before && !(value === null && before === "")) out[key] = value;
    }
    return out;
  }

  function tell(text, bad) {
    $("status").textContent = text;
    $("status").className = bad ? "bad" : "";
  }

  async function saveVoice() {
    const wanted = changes();
    try {
      if (Object.keys(wanted).length) await call("POST", "settings", { changes: wanted });
      await load(true);
      tell(V().saved);
    } catch (e) { tell(e.message, true); }
  }

  async function fetchModel(model) {
    try { status(await call("POST", "voice-fetch", { model })); } catch (e) { tell(e.message, true); }
  }

  async function runTest() {
    const v = V();
    $("v-test").disabled = true;
    $("v-test-result").textContent = v.testing;
    document.body.dataset.voiceTest = "running";
    try {
      const r = await call("POST", "voice-test", {});
      const lines = [r.transcript ? v.heard(r.transcript) : v.heardNothing];
      if (r.code && r.code !== "no_speech") lines.push(r.message);
      $("v-test-result").textContent = lines.join(" ");
      $("v-test-result").className = r.code && r.code !== "no_speech" ? "note bad" : "note";
    } catch (e) { $("v-test-result").textContent = e.message; }
    $("v-test").disabled = false;
    document.body.dataset.voiceTest = "done";
  }

  // The stored values come with the settings view; the form is drawn anew only when asked.
  async function load(redraw) {
    const [settings, view] = await Promise.all([call("GET", "settings"), call("GET", "voice")]);
    values = Object.fromEntries(KEYS.map((k) => [k, settings.values[k]]));
    pinned = Object.fromEntries(KEYS.filter((k) => settings.pinned[k]).map((k) => [k, settings.pinned[k]]));
    if (redraw || !$("v-mic") || drawnFor !== lang()) draw(view);
    status(view);
    document.body.dataset.voice = "drawn";
  }

  let shown = false;
  async function poll() {
    const onSettings = document.body.dataset.ready === "settings" && $("voice-section");
    try {
      if (onSettings && (!shown || drawnFor !== lang())) await load(true);
      else if (onSettings) status(await call("GET", "voice"));
    } catch (e) { /* no session yet, or no voice on this server: app.js says so */ }
    shown = !!onSettings;
    setTimeout(poll, POLL_MS);
  }

  window.addEventListener("DOMContentLoaded", poll);
})();
