// render_template.mjs - the reference rendering of a chat template:
//   node render_template.mjs TEMPLATE.jinja MESSAGES.json [--bos-token S] [--eos-token S] [--no-generation-prompt]
//   node render_template.mjs --batch JOBS.json   (tests: [{template, messages, options}] in, [{ok, text|error}] out)
// MESSAGES.json is the messages array, or an object whose keys all become variables (as llmrun --render takes
// it). Prints the rendering of @huggingface/jinja on stdout; exit 1 with the reason on stderr when it refuses.
import {readFileSync} from "node:fs";
import {Template} from "@huggingface/jinja";

function render(templateText, data, options) {
    const context = Array.isArray(data) ? {messages: data} : {...data};
    context.add_generation_prompt = true;
    for (let i = 0; i < options.length; i++) {
        if (options[i] === "--no-generation-prompt") context.add_generation_prompt = false;
        else if (options[i] === "--bos-token") context.bos_token = options[++i];
        else if (options[i] === "--eos-token") context.eos_token = options[++i];
        else throw new Error(`unknown option ${options[i]}`);
    }
    return new Template(templateText).render(context);
}

if (process.argv[2] === "--batch") {
    const jobs = JSON.parse(readFileSync(process.argv[3], "utf8"));
    const results = jobs.map(({template, messages, options}) => {
        try {
            return {ok: true, text: render(readFileSync(template, "utf8"), messages, options)};
        } catch (e) {
            return {ok: false, error: String(e && e.message ? e.message : e).split("\n")[0]};
        }
    });
    process.stdout.write(JSON.stringify(results));
} else {
    const [templatePath, messagesPath, ...rest] = process.argv.slice(2);
    if (!templatePath || !messagesPath) {
        console.error("usage: node render_template.mjs TEMPLATE.jinja MESSAGES.json [options]");
        process.exit(2);
    }
    const data = JSON.parse(readFileSync(messagesPath, "utf8"));
    try {
        process.stdout.write(render(readFileSync(templatePath, "utf8"), data, rest));
    } catch (e) {
        // exitCode, not exit(): stdout may still be flushing into a pipe
        console.error(String(e && e.message ? e.message : e).split("\n")[0]);
        process.exitCode = 1;
    }
}
