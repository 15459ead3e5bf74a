// openai_client.mjs - the official OpenAI client against the kernel's HTTP API:
//   node openai_client.mjs BASE_URL API_KEY PROMPT MAX_TOKENS CHAT_MAX_TOKENS
// runs models.list, completions.create and chat.completions.create (whole
// and streamed, temperature 0) and a call with a wrong key; prints the
// results as JSON for tests/qemu/cases_api.py to compare.
import OpenAI from "openai";

const [baseURL, apiKey, prompt, maxTokensText, chatMaxTokensText] = process.argv.slice(2);
const max_tokens = Number(maxTokensText), chat_max_tokens = Number(chatMaxTokensText);
const client = new OpenAI({baseURL, apiKey, maxRetries: 0, timeout: 240000});
const out = {};

out.models = (await client.models.list()).data.map((m) => m.id);

const completion = await client.completions.create({model: "m", prompt, max_tokens, temperature: 0});
out.completion = {text: completion.choices[0].text, finish_reason: completion.choices[0].finish_reason,
                  usage: completion.usage};

let text = "", chunks = 0;
for await (const chunk of await client.completions.create({model: "m", prompt, max_tokens, temperature: 0,
                                                          stream: true})) {
    text += chunk.choices[0]?.text ?? "";
    chunks++;
}
out.completion_stream = {text, chunks};

const messages = [{role: "user", content: prompt}];
const chat = await client.chat.completions.create({model: "m", messages, max_tokens: chat_max_tokens,
                                                  temperature: 0});
out.chat = {content: chat.choices[0].message.content, role: chat.choices[0].message.role,
            finish_reason: chat.choices[0].finish_reason, usage: chat.usage};

text = "";
chunks = 0;
let finish = null;
for await (const chunk of await client.chat.completions.create({model: "m", messages, max_tokens: chat_max_tokens,
                                                               temperature: 0, stream: true})) {
    text += chunk.choices[0]?.delta?.content ?? "";
    finish = chunk.choices[0]?.finish_reason ?? finish;
    chunks++;
}
out.chat_stream = {content: text, chunks, finish_reason: finish};

try {
    await new OpenAI({baseURL, apiKey: apiKey + "x", maxRetries: 0}).models.list();
    out.wrong_key = "accepted";
} catch (e) {
    out.wrong_key = {status: e.status, message: e.error?.message ?? String(e)};
}
process.stdout.write(JSON.stringify(out));
