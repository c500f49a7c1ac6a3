'use strict';
// What the bundle takes of undici, under its name (scripts/build.ts undiciRequestOnly): the imports
// of src/net/request.ts, from the modules that define them, without the rest of undici's index.
const Dispatcher = require('undici/lib/dispatcher/dispatcher');
const api = require('undici/lib/api');
// As undici's index does: request() and the rest of the API on every dispatcher.
Object.assign(Dispatcher.prototype, api);
// Loading it sets an Agent as the global dispatcher when there is none, as loading undici's index does.
const { getGlobalDispatcher } = require('undici/lib/global');

module.exports = { errors: require('undici/lib/core/errors'), getGlobalDispatcher };
