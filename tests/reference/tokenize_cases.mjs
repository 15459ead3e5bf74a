// tokenize_cases.mjs - llama.cpp's tokenizer (through node-llama-cpp) over a
// file in llama.cpp's test-tokenizer-0 layout: the inputs, each followed by
// "\n__ggml_vocab_test__\n". Prints one line of ids per input (no BOS, special
// tokens not parsed), as tests/test-tokenizer-0 writes its .out files.
// With --special, control-token text ("<|im_start|>") is parsed, as llama.cpp
// tokenizes a rendered chat template (parse_special).
//
//   node tests/reference/tokenize_cases.mjs VOCAB.gguf CASES.inp [--special] > CASES.out
//
// The first line on stderr names the package versions that answered.
import {readFileSync} from "node:fs";
import {getLlama} from "node-llama-cpp";

const [vocabPath, casesPath, ...options] = process.argv.slice(2);
const specialTokens = options.includes("--special");
if (!vocabPath || !casesPath) {
    console.error("usage: node tokenize_cases.mjs VOCAB.gguf CASES.inp");
    process.exit(2);
}
const SEPARATOR = "\n__ggml_vocab_test__\n";
const inputs = readFileSync(casesPath, "utf8").split(SEPARATOR);
inputs.pop(); // the text after the last separator is not a case

const packageJson = new URL("node_modules/node-llama-cpp/package.json", import.meta.url);
const version = JSON.parse(readFileSync(packageJson, "utf8")).version;
const llama = await getLlama({gpu: false, build: "never", logLevel: "disabled"});
console.error(`reference: node-llama-cpp ${version}, llama.cpp ${llama.llamaCppRelease.release}`);
const model = await llama.loadModel({modelPath: vocabPath, vocabOnly: true});
const lines = inputs.map((text) => Array.from(model.tokenize(text, specialTokens)).join(" "));
process.stdout.write(lines.join("\n") + "\n");
await model.dispose();
await llama.dispose();
