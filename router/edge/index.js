'use strict';
// Lambda@Edge origin-request handler of the cell router. config.json is
// baked into the function package next to this file by the router stack
// (Go: edge.Package); it is compiled once per container, at cold start.
const { createHandler } = require('./routing');

exports.handler = createHandler(require('./config.json'));
