import { quietLibsignalConsole } from '../src/quiet-libsignal';

quietLibsignalConsole();
