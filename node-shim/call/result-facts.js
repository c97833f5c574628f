// @ts-check
// What of a tool result crosses the pipe to the worker: its text, cut at the worker's limit, and
// the plain facts the failure track judges. Both limits and the names of the facts are the
// worker's (its configure reply): the shim defines none of them.

// The text blocks of a tool result, cut at `limit` (the worker's resultTextChars) without
// joining more than that.
export function resultText(result, limit) {
  const content = result?.content;
  if (Array.isArray(content) && content.length === 1 && content[0]?.type === 'text' && typeof content[0].text === 'string') {
    return content[0].text.slice(0, limit); // the usual result: no list of parts to join
  }
  const parts = [];
  let length = 0;
  for (const block of Array.isArray(content) ? content : []) {
    if (block?.type !== 'text' || typeof block.text !== 'string') continue;
    parts.push(block.text.slice(0, limit - length));
    length += parts.at(-1).length;
    if (length >= limit) break;
  }
  return parts.join('\n');
}

// The plain facts of a result the failure track judges (breaker/core/reading/outcomes.py): isError and the
// scalar fields of the tool's structured value the worker names (`fields`, texts cut at
// `textChars`). The value itself never crosses the pipe.
export function outcomeOf(result, fields, textChars) {
  const facts = { isError: result?.isError === true };
  const value = result?.value;
  if (value === null || typeof value !== 'object') return facts;
  for (const key of fields) {
    const item = value[key];
    if (typeof item === 'string') facts[key] = item.slice(0, textChars);
    else if (typeof item === 'boolean' || Number.isFinite(item)) facts[key] = item;
  }
  return facts;
}
