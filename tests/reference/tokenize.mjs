// tokenize.mjs - llama.cpp's tokenizer (node-llama-cpp) as the reference for
// the API's /tokenize and /detokenize: node tokenize.mjs MODEL.gguf TEXTS.json
// prints [{"text", "ids" (no BOS, special text not parsed), "detokenized"}].
import {readFileSync} from "node:fs";
import {getLlama} from "node-llama-cpp";

const [modelPath, textsPath] = process.argv.slice(2);
const texts = JSON.parse(readFileSync(textsPath, "utf8"));
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath, vocabOnly: true});
const out = texts.map((text) => {
    const ids = Array.from(model.tokenize(text, false));
    return {text, ids, detokenized: model.detokenize(ids)};
});
process.stdout.write(JSON.stringify(out));
