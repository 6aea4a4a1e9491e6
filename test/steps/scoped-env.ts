/**
 * Environment variables set for one test and put back afterwards; `onChange`
 * lets the code under test re-read its configuration (e.g. the validator's).
 */
export function scopedEnv(onChange: () => void) {
  const touched = new Map<string, string | undefined>();
  return {
    set(vars: Record<string, string>) {
      for (const [name, value] of Object.entries(vars)) {
        if (!touched.has(name)) touched.set(name, process.env[name]);
        process.env[name] = value;
      }
      onChange();
    },
    restore() {
      for (const [name, value] of touched) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      touched.clear();
      onChange();
    },
  };
}
