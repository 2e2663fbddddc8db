// Runs editions/lite/bytecode.py's main() inside Pyodide under Node, so the bytecode added to
// the site is made by the interpreter that runs it (build.py calls this; see bytecode.py).
//
//     node bytecode.mjs PYODIDE_PACKAGE_DIR JOB.json
//
// The host's / is mounted at /host in Pyodide's file system; JOB.json names host paths.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const [pyodideDir, job] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: path.resolve(pyodideDir) + path.sep });
pyodide.FS.mkdirTree("/host");
pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: "/" }, "/host");
pyodide.globals.set("module_source", readFileSync(path.join(here, "bytecode.py"), "utf8"));
pyodide.globals.set("job_file", path.resolve(job));
pyodide.runPython(`
import types
bytecode = types.ModuleType("bytecode")
exec(compile(module_source, "bytecode.py", "exec"), bytecode.__dict__)
bytecode.main(job_file, root="/host")
`);
