// The call shapes of bench/pipeline.mjs, shared with bench/worker_frames.mjs (the frames the shim
// sends for them, which bench/worker_time.py times through the worker's handler): the tool, the
// arguments of call n, the text its body returns, and how many calls per agent (alone, each of 16).

const PYTHON_LINE = (n) => `    total = sum(value * value for value in values if value % 3)  # line ${n}\n`;
const lines = (count) => Array.from({ length: count }, (_, n) => PYTHON_LINE(n)).join('');
const SIX_KB = lines(80);
const SIXTY_FOUR_KB = lines(880);
const READ_RESULT = Array.from({ length: 40 }, (_, n) => `${String(n + 1).padStart(4)}  const value${n} = compute(${n});`)
  .join('\n')
  .slice(0, 760);
const TEST_OUTPUT = Array.from({ length: 40 }, (_, n) => `  ✓ case ${n} passes (${n % 7} ms)`).join('\n');
const PAGE = `# Guide\n\n${'Some documentation text about the API and how to call it. '.repeat(60)}`;

// name, tool, arguments of call n, the text its body returns, calls per agent (alone, and each of 16)
export const SHAPES = [
  {
    label: '`curl -s --max-time 30 https://…/api/v1/items?page=N -o /tmp/oN.json`',
    tool: 'bash',
    args: (n) => ({
      command: `curl -s --max-time 30 https://api.example.org/api/v1/items?page=${n} -o /tmp/o${n}.json`,
      description: 'fetch one page',
    }),
    result: '',
    calls: 300,
    perAgent: 40,
  },
  {
    label: '`read` of 40 lines (result ~760 chars)',
    tool: 'read',
    args: (n) => ({ path: `/w/src/module_${n % 50}.js`, offset: n, limit: 40 }),
    result: READ_RESULT,
    calls: 300,
    perAgent: 40,
  },
  {
    label: '`edit` (old/new string)',
    tool: 'edit',
    args: (n) => ({
      path: '/w/src/app.js',
      old_string: `  return compute(values, { limit: ${n} });\n`,
      new_string: `  return compute(values, { limit: ${n + 1}, strict: true });\n`,
    }),
    result: 'The file /w/src/app.js has been edited.',
    calls: 300,
    perAgent: 40,
  },
  {
    label: '`cd /w && npm test -- --grep "case N" 2>&1 | tail -40`',
    tool: 'bash',
    args: (n) => ({ command: `cd /w && npm test -- --grep "case ${n}" 2>&1 | tail -40`, description: 'run one case' }),
    result: TEST_OUTPUT,
    calls: 300,
    perAgent: 40,
  },
  {
    label: '`web_fetch` of a docs page (result ~3.5 KB)',
    tool: 'web_fetch',
    args: (n) => ({ url: `https://docs.example.org/guide/page-${n}.html#usage`, prompt: 'summarise' }),
    result: PAGE,
    calls: 300,
    perAgent: 40,
  },
  {
    label: 'bash heredoc of 6 KB',
    tool: 'bash',
    args: (n) => ({ command: `cat > /tmp/script_${n}.py <<'EOF'\n${SIX_KB}EOF\npython3 /tmp/script_${n}.py`, description: 'run a script' }),
    result: 'ok',
    calls: 150,
    perAgent: 20,
  },
  {
    label: 'bash heredoc of 64 KB',
    tool: 'bash',
    args: (n) => ({ command: `cat > /tmp/big_${n}.py <<'EOF'\n${SIXTY_FOUR_KB}EOF\npython3 /tmp/big_${n}.py`, description: 'run a script' }),
    result: 'ok',
    calls: 20,
    perAgent: 2,
  },
  {
    label: '`write` of 64 KB',
    tool: 'write',
    args: (n) => ({ path: `/w/src/generated_${n}.py`, content: `# file ${n}\n${SIXTY_FOUR_KB}` }),
    result: `Wrote 64 KB.`,
    calls: 30,
    perAgent: 4,
  },
];

/**
 * What a call's body returns: the shape's result marked with a serial, so distinct calls get
 * distinct answers, as they do in use (the defaults read results: a run of identical answers on one
 * target is no progress, and would be stopped).
 */
export function answerOf(result, serial) {
  return result === '' ? `#${serial}` : `${result}\n#${serial}`;
}
