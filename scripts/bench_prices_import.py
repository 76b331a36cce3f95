"""Peak memory of `headroom prices import aws` on an offer file the size of AWS's EC2 one.

AWS's bulk offer file for AmazonEC2 in one region is about 450 MB of JSON: ~106,000 products
(each with ~40 attributes) and their terms (on demand, and several reserved ones each). This
writes a file of that shape and size (products first, then terms, as AWS writes them; real
attribute names; prices made up), then runs the release binary on it under GNU time three
times and reports the median wall time and peak RSS, beside the file's size. As a peer read
in the same run, Python's `json.load` of the same file (what reading it whole costs) once.

    scripts/bench-prices-import.sh [--products 106000] [--keep FILE]

Needs the release binary (`cargo build --release --locked`) and /usr/bin/time.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(ROOT, "target", "release", "headroom")

SIZES = ["nano", "micro", "small", "medium", "large", "xlarge", "2xlarge", "4xlarge", "8xlarge"]
SYSTEMS = [("Linux", "No License required"), ("Windows", "License included"),
           ("RHEL", "No License required"), ("SUSE", "No License required")]


def product(i):
    family = f"f{i % 97}"
    size = SIZES[i % len(SIZES)]
    system, licence = SYSTEMS[(i // len(SIZES)) % len(SYSTEMS)]
    tenancy = ["Shared", "Dedicated", "Host"][(i // 36) % 3]
    vcpu = 2 ** (i % len(SIZES) // 2)
    attributes = {
        "servicecode": "AmazonEC2", "location": "US East (N. Virginia)", "locationType": "AWS Region",
        "instanceType": f"{family}.{size}", "currentGeneration": "Yes", "instanceFamily": "General purpose",
        "vcpu": str(vcpu), "physicalProcessor": "AWS Graviton3 Processor", "clockSpeed": "2.6 GHz",
        "memory": f"{vcpu * 4} GiB", "storage": "EBS only", "networkPerformance": "Up to 12500 Megabit",
        "processorArchitecture": "64-bit", "tenancy": tenancy, "operatingSystem": system,
        "licenseModel": licence, "usagetype": f"BoxUsage:{family}.{size}", "operation": "RunInstances",
        "availabilityzone": "NA", "capacitystatus": ["Used", "UnusedCapacityReservation", "AllocatedCapacityReservation"][i % 3],
        "classicnetworkingsupport": "false", "dedicatedEbsThroughput": "Up to 10000 Mbps", "ecu": "NA",
        "enhancedNetworkingSupported": "Yes", "gpuMemory": "NA", "intelAvxAvailable": "No",
        "intelAvx2Available": "No", "intelTurboAvailable": "No", "marketoption": "OnDemand",
        "normalizationSizeFactor": "4", "preInstalledSw": ["NA", "SQL Web", "SQL Std"][(i // 7) % 3],
        "processorFeatures": "AWS Graviton3", "regionCode": "us-east-1",
        "servicename": "Amazon Elastic Compute Cloud", "vpcnetworkingsupport": "true",
    }
    return {"sku": sku(i), "productFamily": "Compute Instance", "attributes": attributes}


def sku(i):
    return f"SKU{i:013d}"


def term(i, code, unit, usd, extra=None):
    dimension = {
        "rateCode": f"{sku(i)}.{code}.6YS6EN2CT7",
        "description": f"${usd} per On Demand Linux instance hour",
        "beginRange": "0", "endRange": "Inf", "unit": unit,
        "pricePerUnit": {"USD": f"{usd:.10f}"}, "appliesTo": [],
    }
    return {f"{sku(i)}.{code}": {
        "offerTermCode": code, "sku": sku(i), "effectiveDate": "2026-09-01T00:00:00Z",
        "priceDimensions": {dimension["rateCode"]: dimension},
        "termAttributes": extra or {},
    }}


def write_offer(path, products):
    with open(path, "w") as out:
        out.write('{"formatVersion":"v1.0","offerCode":"AmazonEC2","version":"20260909004605",'
                  '"publicationDate":"2026-09-09T00:46:05Z","products":{')
        for i in range(products):
            out.write(("," if i else "") + json.dumps(sku(i)) + ":" + json.dumps(product(i)))
        out.write('},"terms":{"OnDemand":{')
        for i in range(products):
            usd = 0.0042 * (1 + i % 50)
            out.write(("," if i else "") + json.dumps(sku(i)) + ":" + json.dumps(term(i, "JRTCKXETXF", "Hrs", usd)))
        out.write('},"Reserved":{')
        for i in range(products):
            terms = {}
            for code, length in (("4NA7Y494T4", "1yr"), ("6QCMYABX3D", "1yr"), ("HU7G6KETJZ", "1yr"),
                                 ("38NPMPTW36", "3yr"), ("NQ3QZPMQV9", "3yr"), ("7NE97W5U4E", "3yr")):
                terms.update(term(i, code, "Quantity", 100.0 + i % 7,
                                  {"LeaseContractLength": length, "OfferingClass": "standard",
                                   "PurchaseOption": "All Upfront"}))
            out.write(("," if i else "") + json.dumps(sku(i)) + ":" + json.dumps(terms))
        out.write('}},"attributesList":{}}\n')


def measured(command):
    """Wall seconds and peak RSS (KiB) of `command`, by GNU time."""
    started = time.monotonic()
    run = subprocess.run(["/usr/bin/time", "-f", "%M"] + command, capture_output=True, text=True)
    wall = time.monotonic() - started
    if run.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{run.stderr}")
    return wall, int(run.stderr.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--products", type=int, default=106_000)
    parser.add_argument("--keep", help="write the offer file here and keep it")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if not os.path.exists(BINARY):
        sys.exit(f"no release binary at {BINARY}: cargo build --release --locked")
    folder = tempfile.mkdtemp(prefix="headroom-prices-import-")
    offer = args.keep or os.path.join(folder, "index.json")
    started = time.monotonic()
    write_offer(offer, args.products)
    size = os.path.getsize(offer)
    print(f"offer file: {size / 1e6:.0f} MB, {args.products:,} products, written in {time.monotonic() - started:.0f} s")
    table = os.path.join(folder, "prices.toml")
    runs = [measured([BINARY, "prices", "import", "aws", offer, "--region", "us-east-1", "--out", table])
            for _ in range(args.repeats)]
    walls = [w for w, _ in runs]
    peaks = [p for _, p in runs]
    with open(table) as f:
        rows = sum(1 for line in f if line.startswith("[["))
    print(f"headroom prices import aws: median {statistics.median(walls):.1f} s, peak RSS median "
          f"{statistics.median(peaks) / 1024:.1f} MiB (max {max(peaks) / 1024:.1f} MiB) over {args.repeats} runs; "
          f"{rows} rows")
    wall, peak = measured([sys.executable, "-c", f"import json; json.load(open({offer!r}))"])
    print(f"python3 json.load of the same file (the peer, reading it whole): {wall:.1f} s, peak RSS {peak / 1024:.0f} MiB")
    print(f"ratio: headroom's peak is {statistics.median(peaks) / peak:.3f} of reading it whole")
    if not args.keep:
        os.remove(offer)


if __name__ == "__main__":
    main()
