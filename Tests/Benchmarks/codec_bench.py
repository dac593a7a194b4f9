"""Runs the codec benchmark cases and prints a table of medians, ratios and peak RSS.

Each process-level time is hyperfine's median over RUNS runs (no shell, 2 warm-ups).
The in-process time is ThumbBench's median over RUNS iterations of prepare+encode.
Peak RSS is the maximum resident set of one run of the process (wait4 rusage).
"""
import argparse, json, os, shutil, subprocess, tempfile

def hyperfine_median(cmd, runs):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run(["hyperfine", "-N", "--warmup", "2", "--runs", str(runs), "--export-json",
                        out.name, "--style", "none", cmd], check=True, stdout=subprocess.DEVNULL)
        return json.load(open(out.name))["results"][0]["median"] * 1000

def peak_rss_mb(argv):
    pid = os.posix_spawnp(argv[0], argv, os.environ)
    _, status, usage = os.wait4(pid, 0)
    if status != 0:
        raise SystemExit(f"failed: {argv}")
    return usage.ru_maxrss / 1024

def in_process(bin_dir, path, runs):
    line = subprocess.run([f"{bin_dir}/ThumbBench", "--runs", str(runs), "--w", "256", "--h", "256", path],
                          check=True, capture_output=True, text=True).stdout.split()
    return float(line[1])

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin"); ap.add_argument("--inputs"); ap.add_argument("--runs", type=int, default=15)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()   # the outputs of every command, removed at the end
    try:
        run(a, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

def run(a, tmp):
    thumbd = f"{a.bin}/thumbd"
    rows = []
    # Decode floors: each library's own command-line decoder, output discarded or
    # as cheap as it allows (avifdec and heif-convert must write a file: raw y4m).
    floors = {
        ".jpg": ("djpeg -scale 1/8", lambda src: ["djpeg", "-scale", "1/8", "-outfile", "/dev/null", src]),
        ".png": ("libpng decode (pngdecode)", lambda src: [f"{a.inputs}/pngdecode", src]),
        ".webp": ("dwebp (full decode)", lambda src: ["dwebp", "-quiet", src]),
        ".avif": ("avifdec (to y4m)", lambda src: ["avifdec", src, f"{tmp}/a.y4m"]),
        ".heic": ("heif-convert (to y4m)", lambda src: ["heif-convert", src, f"{tmp}/h.y4m"]),
    }
    for name in ["jpeg-12mp-baseline.jpg", "jpeg-12mp-progressive.jpg", "jpeg-4mp.jpg",
                 "png-12mp-rgb.png", "png-12mp-rgba.png",
                 "webp-12mp.webp", "webp-12mp-p3.webp", "avif-12mp.avif", "heic-12mp.heic"]:
        src = os.path.join(a.inputs, name)
        ours = [thumbd, "thumbnail", src, f"{tmp}/out.jpg", "--w", "256", "--h", "256"]
        label, floor = floors[os.path.splitext(name)[1]]
        peers = {label: floor(src),
                 "vipsthumbnail": ["vipsthumbnail", src, "-s", "256x256", "-o", f"{tmp}/v.jpg"]}
        inproc = in_process(a.bin, src, a.runs)
        proc = hyperfine_median(" ".join(ours), a.runs)
        row = {"input": name, "in-process ms": inproc, "thumbd thumbnail ms": proc,
               "thumbd peak MB": peak_rss_mb(ours), "peers": {}}
        for label, argv in peers.items():
            row["peers"][label] = (hyperfine_median(" ".join(argv), a.runs), peak_rss_mb(argv))
        rows.append(row)
    print(f"\nmedians of {a.runs} runs; ratio = ours / peer (lower is better)\n")
    print("| input | thumbd in-process ms | thumbd process ms | thumbd peak MB | peer | peer ms | peer peak MB | in-process/peer | process/peer |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        for label, (ms, mb) in r["peers"].items():
            print(f"| {r['input']} | {r['in-process ms']:.1f} | {r['thumbd thumbnail ms']:.1f} | "
                  f"{r['thumbd peak MB']:.0f} | {label} | {ms:.1f} | {mb:.0f} | "
                  f"{r['in-process ms'] / ms:.2f} | {r['thumbd thumbnail ms'] / ms:.2f} |")

if __name__ == "__main__":
    main()
