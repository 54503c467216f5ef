import { buildScenarios, surveyCatalogue } from "./Workload.js"
const s = buildScenarios(surveyCatalogue(Number(process.argv[2] ?? 100000)))
for (const x of s.filter((x) => x.route === "search")) console.log(x.id, x.paths.join(" "))
