/**
 * `%%relay` cells in Python notebooks and consoles: while a cell's first line is a
 * `%%relay ...` magic, its editor parses the cell as Relay.
 *
 * The cell's model keeps its Python mimetype (kernel completions, the debugger and the
 * notebook's own per-kernel language switching rely on it); instead, a compartment of the
 * editor holds the Relay language at the highest precedence, which wins over the language
 * JupyterLab configures.  A transaction extender swaps it in or out when an edit changes
 * whether the first line is the magic; a view plugin does when the model's mimetype
 * changes (the notebook sets it after creating the editor, and again per kernel).
 */
import { LanguageSupport } from '@codemirror/language';
import { Compartment, EditorState, Extension, Prec, Text } from '@codemirror/state';
import { EditorView, ViewPlugin } from '@codemirror/view';
import { CodeEditor } from '@jupyterlab/codeeditor';

/** The mimetypes of the cells `%%relay` magics can be typed in (IPython). */
const PYTHON_MIMES = new Set(['text/x-ipython', 'text/x-python']);
const MAGIC = /^%%relay\b/;

/**
 * An editor extension that highlights the editor's text as ``relay`` while it is a
 * `%%relay` cell of a Python editor.
 */
export function relayMagicExtension(model: CodeEditor.IModel, relay: LanguageSupport): Extension {
  const compartment = new Compartment();
  const isRelay = (doc: Text) => PYTHON_MIMES.has(model.mimeType) && MAGIC.test(doc.line(1).text);
  const isOn = (state: EditorState) => {
    const current = compartment.get(state);
    return Array.isArray(current) ? current.length > 0 : !!current;
  };
  const content = (on: boolean) => (on ? Prec.highest(relay) : []);
  const sync = (view: EditorView) => {
    const on = isRelay(view.state.doc);
    if (on !== isOn(view.state)) {
      view.dispatch({ effects: compartment.reconfigure(content(on)) });
    }
  };
  return [
    compartment.of(content(isRelay(Text.of(model.sharedModel.getSource().split('\n'))))),
    EditorState.transactionExtender.of(tr => {
      if (!tr.docChanged) {
        return null;
      }
      const on = isRelay(tr.newDoc);
      return on === isOn(tr.startState) ? null : { effects: compartment.reconfigure(content(on)) };
    }),
    ViewPlugin.define(view => {
      const onMimeType = () => sync(view);
      model.mimeTypeChanged.connect(onMimeType);
      return { destroy: () => model.mimeTypeChanged.disconnect(onMimeType) };
    })
  ];
}
