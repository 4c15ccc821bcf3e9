/**
 * relay-nb-highlight: Relay syntax highlighting in JupyterLab.
 *
 * Registers the `relay` language (mimetype text/x-relay, extension .relay), which the
 * Relay kernel's language_info names, and an editor extension that highlights `%%relay`
 * cells of Python notebooks as Relay.
 */
import { LanguageSupport, StreamLanguage, syntaxHighlighting } from '@codemirror/language';
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import {
  EditorExtensionRegistry,
  IEditorExtensionRegistry,
  IEditorLanguageRegistry
} from '@jupyterlab/codemirror';

import { relayMagicExtension } from './magic';
import { relayHighlightStyle } from './style';
import { relayParser } from './tokens';

const relay = new LanguageSupport(StreamLanguage.define(relayParser), [
  syntaxHighlighting(relayHighlightStyle)
]);

const language: JupyterFrontEndPlugin<void> = {
  id: 'relay-nb-highlight:language',
  description: 'The Relay language for the editor (Relay kernel cells, .relay files).',
  autoStart: true,
  requires: [IEditorLanguageRegistry],
  activate: (_app: JupyterFrontEnd, languages: IEditorLanguageRegistry) => {
    languages.addLanguage({
      name: 'relay',
      displayName: 'Relay',
      mime: 'text/x-relay',
      extensions: ['relay', 'rly'],
      support: relay
    });
  }
};

const magic: JupyterFrontEndPlugin<void> = {
  id: 'relay-nb-highlight:magic',
  description: 'Highlights %%relay cells of Python notebooks and consoles as Relay.',
  autoStart: true,
  requires: [IEditorExtensionRegistry],
  activate: (_app: JupyterFrontEnd, extensions: IEditorExtensionRegistry) => {
    extensions.addExtension({
      name: 'relay-nb-highlight:magic',
      // Cells and console prompts are inline editors; a .py file is not a cell.
      factory: ({ inline, model }) =>
        inline
          ? EditorExtensionRegistry.createImmutableExtension(relayMagicExtension(model, relay))
          : null
    });
  }
};

export default [language, magic];
