// @ts-check
/**
 * The Relay text format as a CodeMirror 6 stream parser (plain JavaScript with no imports,
 * so tests/test_labextension.py runs this very file in Node.js and compares its tokens
 * with the Pygments lexer's on the seeds and a real printout).
 *
 * The token classes follow relay_nb's Pygments lexer (relay_nb/syntax/pygments_lexer.py),
 * rule for rule and in the same order, so a notebook cell and an nbconvert/Sphinx export
 * highlight the same words the same way.  Style names are CodeMirror highlight tags, chosen
 * so JupyterLab's highlight style colours them with the theme's --jp-mirror-editor-*
 * colours (types get the theme's variable-3 colour from relayHighlightStyle in style.ts).
 */

export const KEYWORDS = [
  'def', 'fn', 'let', 'if', 'else', 'match', 'type', 'extern', 'free_var', 'ref', 'ref_read',
  'ref_write'
];
export const CONSTANTS = ['True', 'False', 'None', 'nullptr', 'inff'];
export const DTYPES = [
  'bool', 'int8', 'int16', 'int32', 'int64', 'uint1', 'uint8', 'uint16', 'uint32', 'uint64',
  'float16', 'float32', 'float64', 'bfloat16', 'int', 'float'
];

const NAME = '[A-Za-z_][\\w/]*';
/** @param {string[]} list */
const words = list => new RegExp(`^(?:${list.join('|')})\\b`);
/** @type {Array<[RegExp, string]>} */
const RULES = [
  [/^meta\[[^\]\s]+\]\[\d+\]/, 'atom'], // meta[relay.Constant][0]
  [new RegExp(`^@${NAME}`), 'variableName.function.definition'], // @main
  [/^%\d+/, 'labelName'], // %0: a graph binding
  [new RegExp(`^%${NAME}(?:(?:\\.\\d+)*\\.${NAME})*`), 'variableName.special'], // %x, %conv1.weight
  [/^\.\d+/, 'number'], // a tuple projection: %t.0
  [/^match\?/, 'keyword'],
  [words(KEYWORDS), 'keyword'],
  [/^Tensor\b/, 'typeName'],
  [words(DTYPES), 'typeName'],
  [words(CONSTANTS), 'atom'],
  [/^"(?:[^"\\\n]|\\.)*"/, 'string'],
  [/^-*\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?:f16|f32|f64|f|i8|i16|i32|i64|i|u8|u16|u32|u64)?\b/, 'number'],
  [/^\?/, 'typeName'], // a dynamic dimension
  [new RegExp(`^${NAME}(?=\\s*=(?![=>]))`), 'attributeName'], // strides=[1, 1]
  [/^[A-Z]\w*/, 'className'], // ADTs and constructors: List, Cons, Nil
  [new RegExp(`^${NAME}(?:\\.${NAME})*(?=\\s*\\()`), 'variableName.standard'], // nn.conv2d(
  [new RegExp(`^${NAME}(?:\\.${NAME})*`), 'variableName'],
  [/^(?:=>|->|==|!=|<=|>=|&&|\|\||[-+*/<>=!])/, 'operator'],
  [/^[()[\]{},;:.]/, 'punctuation']
];
// After #[metadata] the rest of the text is JSON.
/** @type {Array<[RegExp, string]>} */
const JSON_RULES = [
  [/^"(?:[^"\\]|\\.)*"(?=\s*:)/, 'propertyName'],
  [/^"(?:[^"\\]|\\.)*"/, 'string'],
  [/^-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/, 'number'],
  [/^(?:true|false|null)\b/, 'atom'],
  [/^[[\]{},:]/, 'punctuation']
];

/**
 * @typedef {object} RelayState
 * @property {number} comment depth of nested block comments the line starts in
 * @property {boolean} json inside the #[metadata] section
 * @property {number} lines lines begun so far, counted up to 2 (a `%%relay` magic is the first)
 */

/**
 * @param {import('@codemirror/language').StringStream} stream
 * @param {RelayState} state
 */
function blockComment(stream, state) {
  while (!stream.eol()) {
    if (stream.match('/*')) {
      state.comment++;
    } else if (stream.match('*/')) {
      if (--state.comment === 0) {
        break;
      }
    } else if (!stream.match(/^[^*/]+/)) {
      stream.next();
    }
  }
  return 'comment';
}

/**
 * @param {import('@codemirror/language').StringStream} stream
 * @param {Array<[RegExp, string]>} rules
 */
function matchRules(stream, rules) {
  for (const [pattern, style] of rules) {
    if (stream.match(pattern)) {
      return style;
    }
  }
  stream.next();
  return null;
}

/** @type {import('@codemirror/language').StreamParser<RelayState>} */
export const relayParser = {
  name: 'relay',
  startState: () => ({ comment: 0, json: false, lines: 0 }),
  blankLine: state => {
    state.lines = Math.min(state.lines + 1, 2);
  },
  token(stream, state) {
    if (stream.sol()) {
      state.lines = Math.min(state.lines + 1, 2);
      // The magic line of a %%relay cell: its options stay readable as one meta token.
      if (state.lines === 1 && stream.match(/^%%.*/)) {
        return 'meta';
      }
    }
    if (state.comment > 0) {
      return blockComment(stream, state);
    }
    if (stream.eatSpace()) {
      return null;
    }
    if (state.json) {
      return matchRules(stream, JSON_RULES);
    }
    if (stream.match(/^#\[\s*metadata\s*\]/)) {
      state.json = true;
      return 'meta';
    }
    if (stream.match(/^#\[[^\]]*\]/)) {
      return 'meta'; // #[version = "0.0.5"]
    }
    if (stream.match('//')) {
      stream.skipToEnd();
      return 'comment';
    }
    if (stream.match('/*')) {
      state.comment = 1;
      return blockComment(stream, state);
    }
    return matchRules(stream, RULES);
  },
  languageData: {
    commentTokens: { line: '//', block: { open: '/*', close: '*/' } },
    closeBrackets: { brackets: ['(', '[', '{', '"'] }
  }
};
