/** Colours for the highlight tags JupyterLab's own highlight style leaves plain. */
import { HighlightStyle } from '@codemirror/language';
import { tags } from '@lezer/highlight';

/** Types, dtypes and ADTs in the theme's variable-3 colour (CodeMirror 5's type colour). */
export const relayHighlightStyle = HighlightStyle.define([
  { tag: [tags.typeName, tags.className], color: 'var(--jp-mirror-editor-variable-3-color)' }
]);
