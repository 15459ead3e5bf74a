// llama_ref.mjs - llama.cpp (through node-llama-cpp) as the tests' reference:
// one request on the command line, one JSON object on stdout.
//
//   node tests/reference/llama_ref.mjs version
//   node tests/reference/llama_ref.mjs tokenize MODEL TEXT
//   node tests/reference/llama_ref.mjs greedy MODEL N [--prompt TEXT | --ids FILE] [--kv f32|f16|q8_0] [--ctx N]
//   node tests/reference/llama_ref.mjs top1 MODEL --ids FILE --from K [--kv TYPE] [--ctx N]
//
// Every answer carries "reference": the node-llama-cpp version and the llama.cpp
// release inside it. tokenize and greedy add BOS as llama.cpp does for the model.
// greedy: the prompt, then N tokens each the argmax of llama.cpp's logits, with
// each step's margin (top-1 logit minus top-2), its second choice and the text
// of each prefix. top1: the ids (a JSON array in
// FILE) teacher-forced; for every position from K on, llama.cpp's top-1 token
// for the next position and its margin (to compare with another program's
// continuation). --kv sets the KV cache type of keys and values; a quantised V
// cache needs flash attention in llama.cpp, so q8_0 turns it on (f32/f16: off).
// Thread count: LLAMA_REF_THREADS (default 2).
import {readFileSync} from "node:fs";
import {getLlama} from "node-llama-cpp";

const KV_TYPES = {f32: "F32", f16: "F16", q8_0: "Q8_0"};

function usage(why) {
    process.stderr.write(`llama_ref: ${why}\n` +
        "usage: llama_ref.mjs version | tokenize MODEL TEXT | greedy MODEL N [--prompt TEXT|--ids FILE] [--kv T] [--ctx N]" +
        " | top1 MODEL --ids FILE --from K [--kv T] [--ctx N]\n");
    process.exit(2);
}

function options(args) {
    const opts = {};
    for (let i = 0; i < args.length; i += 2) {
        if (!args[i].startsWith("--") || i + 1 >= args.length) usage(`bad option ${args[i]}`);
        opts[args[i].slice(2)] = args[i + 1];
    }
    if (opts.kv !== undefined && !(opts.kv in KV_TYPES)) usage(`--kv ${opts.kv}: want f32, f16 or q8_0`);
    return opts;
}

function reference(llama) {
    const pkg = JSON.parse(readFileSync(new URL("node_modules/node-llama-cpp/package.json", import.meta.url), "utf8"));
    const cpp = llama.llamaCppRelease;
    return `node-llama-cpp ${pkg.version} (llama.cpp ${cpp.repo} ${cpp.release})`;
}

function withBos(model, ids) {
    return model.tokens.shouldPrependBosToken ? [model.tokens.bos, ...ids] : ids;
}

function promptIds(model, opts) {
    if (opts.ids !== undefined) return JSON.parse(readFileSync(opts.ids, "utf8"));
    if (opts.prompt !== undefined) return withBos(model, model.tokenize(opts.prompt, false));
    usage("give --prompt TEXT or --ids FILE");
}

async function sequence(model, opts, length) {
    const kv = KV_TYPES[opts.kv ?? "f16"];
    const contextSize = Number(opts.ctx ?? Math.max(64, length + 8));
    const context = await model.createContext({
        contextSize, batchSize: Math.min(contextSize, 512), threads: Number(process.env.LLAMA_REF_THREADS ?? 2),
        flashAttention: kv === "Q8_0", experimentalKvCacheKeyType: kv, experimentalKvCacheValueType: kv,
    });
    return {context, seq: context.getSequence({contextShift: {size: 0}}), kv: opts.kv ?? "f16"};
}

// The two highest logits of one step's output: [top token, margin, second token].
function topTwo(output) {
    const ranked = [...output.next.logits.entries()].sort((a, b) => b[1] - a[1]);
    return ranked.length > 1 ? [ranked[0][0], ranked[0][1] - ranked[1][1], ranked[1][0]] : [ranked[0][0], Infinity, -1];
}

const WANT_TOP = {generateNext: {logits: {filter: {tokens: [], includeTop: 2}}}};

async function greedy(model, n, opts) {
    const prompt = promptIds(model, opts);
    const {seq, kv} = await sequence(model, opts, prompt.length + n);
    const tokens = [], margins = [], seconds = [];
    let input = prompt.map((t, i) => (i === prompt.length - 1 ? [t, WANT_TOP] : t));
    for (let step = 0; step < n; step++) {
        const out = await seq.controlledEvaluate(input);
        const [token, margin, second] = topTwo(out[input.length - 1]);
        tokens.push(token);
        margins.push(margin);
        seconds.push(second);
        input = [[token, WANT_TOP]];
    }
    // texts[i]: the text of the first i + 1 tokens (for a caller that stopped earlier).
    const texts = tokens.map((_, i) => model.detokenize(tokens.slice(0, i + 1)));
    return {prompt_ids: prompt, tokens, margins, seconds, text: texts[n - 1], texts, kv};
}

async function top1(model, opts) {
    const ids = promptIds(model, opts);
    const from = Number(opts.from);
    if (!(from >= 1 && from < ids.length)) usage(`--from ${opts.from}: want 1..${ids.length - 1}`);
    const {seq, kv} = await sequence(model, opts, ids.length);
    // Position i's output predicts the token at i + 1: ask for positions from - 1 .. ids.length - 1.
    const out = await seq.controlledEvaluate(ids.map((t, i) => (i >= from - 1 ? [t, WANT_TOP] : t)));
    const tokens = [], margins = [], seconds = [];
    for (let i = from - 1; i < ids.length; i++) {
        const [token, margin, second] = topTwo(out[i]);
        tokens.push(token);
        margins.push(margin);
        seconds.push(second);
    }
    return {from, tokens, margins, seconds, kv};
}

const [command, modelPath, ...rest] = process.argv.slice(2);
if (!command) usage("no command");
const llama = await getLlama({gpu: false, build: "never", logLevel: "error", progressLogs: false});
let result;
if (command === "version") {
    result = {};
} else {
    if (!modelPath) usage("no MODEL");
    if (command === "tokenize") {
        const model = await llama.loadModel({modelPath, vocabOnly: true});
        result = {ids: withBos(model, model.tokenize(rest.join(" "), false))};
    } else if (command === "greedy") {
        const n = Number(rest[0]);
        if (!(n >= 1)) usage("greedy wants N >= 1");
        result = await greedy(await llama.loadModel({modelPath}), n, options(rest.slice(1)));
    } else if (command === "top1") {
        result = await top1(await llama.loadModel({modelPath}), options(rest));
    } else {
        usage(`unknown command ${command}`);
    }
}
process.stdout.write(JSON.stringify({reference: reference(llama), ...result}) + "\n");
process.exit(0);
