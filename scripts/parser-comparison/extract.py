"""Writes the distinct shell scripts of the fixtures, the shared corpus and tests/scripts.rs' shell-syntax
test to OUT/NNNN.sh (with OUT/NNNN.src saying where each came from). Usage: extract.py REPO SHARED OUT"""
import yaml, glob, os, sys, json, re
REPO, SHARED, OUT = sys.argv[1:4]
os.makedirs(OUT, exist_ok=True)
SH = {"sh","bash","ash","dash","zsh","ksh","busybox"}
out = []
def walk(o, src):
    if isinstance(o, dict):
        for k, v in o.items():
            if k in ("command","args") and isinstance(v, list) and all(isinstance(x,str) for x in v):
                for i,x in enumerate(v):
                    if x.startswith("-") and "c" in x[1:] and not x.startswith("--") and i+1 < len(v):
                        out.append((src+":"+k, v[i+1]))
                        break
            if k == "data" and isinstance(v, dict) and o.get("kind") == "ConfigMap":
                for dk, dv in v.items():
                    if isinstance(dv, str) and ("\n" in dv or dv.startswith("#!")):
                        out.append((src+":cm:"+dk, dv))
            walk(v, src)
    elif isinstance(o, list):
        for x in o: walk(x, src)
files = glob.glob(REPO + "/tests/fixtures/**/*.yaml", recursive=True) + glob.glob(REPO + "/tests/fixtures/**/*.json", recursive=True) + glob.glob(SHARED + "/corpus/**/*.yaml", recursive=True)
for f in files:
    try:
        docs = list(yaml.safe_load_all(open(f))) if f.endswith(".yaml") else [json.load(open(f))]
    except Exception as e:
        continue
    for d in docs: walk(d, os.path.relpath(f, os.path.dirname(REPO)))
seen=set(); n=0
for src, s in out:
    if s in seen: continue
    seen.add(s)
    open(f"{OUT}/{n:04d}.sh","w").write(s); open(f"{OUT}/{n:04d}.src","w").write(src); n+=1
src = open(REPO + "/tests/scripts.rs").read()
start = src.index("fn shell_syntax_around_a_local_check")
m = 100
for lit in re.findall(r'^\s*\(?("(?:[^"\\]|\\.)*")', src[start:start + 6000], re.M):
    open(f"{OUT}/{m:04d}.sh", "w").write(json.loads(lit))
    open(f"{OUT}/{m:04d}.src", "w").write("tests/scripts.rs")
    m += 1
print(n, "fixture and corpus scripts,", m - 100, "from tests/scripts.rs")
