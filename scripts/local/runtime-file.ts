/** Where `npm start` keeps its data, and tells the admin command line how to reach it. */
export const LOCAL_DIR = process.env.LOCAL_DIR ?? '.local';
export const RUNTIME_FILE = `${LOCAL_DIR}/runtime.json`;

export interface RuntimeFile {
  pid: number;
  env: Record<string, string>;
}
