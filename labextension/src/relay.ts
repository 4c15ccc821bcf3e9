/**
 * The Relay text format as a CodeMirror 6 stream parser.
 *
 * The token classes follow relay_nb's Pygments lexer (relay_nb/syntax/pygments_lexer.py),
 * rule for rule and in the same order, so a notebook cell and an nbconvert/Sphinx export
 * highlight the same words the same way; tests/test_labextension.py checks that the word
 * lists below match the lexer's.  Style names are CodeMirror highlight tags, chosen so
 * JupyterLab's own highlight style colours them with the theme's --jp-mirror-editor-*
 * colours (types get the theme's variable-3 colour from `relayHighlightStyle`).
 */
import { HighlightStyle, StreamParser, StringStream } from '@codemirror/language';
import { tags } from '@lezer/highlight';

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
const words = (list: string[]) => new RegExp(`^(?:${list.join('|')})\\b`);
const RULES: Array<[RegExp, string]> = [
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
const JSON_RULES: Array<[RegExp, string]> = [
  [/^"(?:[^"\\]|\\.)*"(?=\s*:)/, 'propertyName'],
  [/^"(?:[^"\\]|\\.)*"/, 'string'],
  [/^-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/, 'number'],
  [/^(?:true|false|null)\b/, 'atom'],
  [/^[[\]{},:]/, 'punctuation']
];

export interface IRelayState {
  /** Depth of nested block comments the line starts in. */
  comment: number;
  /** Inside the #[metadata] section. */
  json: boolean;
  /** Lines begun so far, counted up to 2: a `%%relay` magic line is only the first. */
  lines: number;
}

function blockComment(stream: StringStream, state: IRelayState): string {
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

function matchRules(stream: StringStream, rules: Array<[RegExp, string]>): string | null {
  for (const [pattern, style] of rules) {
    if (stream.match(pattern)) {
      return style;
    }
  }
  stream.next();
  return null;
}

export const relayParser: StreamParser<IRelayState> = {
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

/** Colours for the tags JupyterLab's highlight style leaves plain (types, ADTs). */
export const relayHighlightStyle = HighlightStyle.define([
  { tag: [tags.typeName, tags.className], color: 'var(--jp-mirror-editor-variable-3-color)' }
]);
