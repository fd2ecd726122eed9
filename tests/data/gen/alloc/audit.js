// The audit trail of app.js: a second file, so that a leak is allocated in another
// script. `makeAuditor` returns a closure; the entries it records are held only by the
// array that closure captures (a closure-held leak).
class AuditEntry {
  constructor(order, seq) {
    this.orderId = order.id;
    this.seq = seq;
    this.note = 'order ' + order.id + ' placed';
  }
}

function makeAuditor() {
  const trail = [];
  let seq = 0;
  return function recordAudit(order) {
    trail.push(new AuditEntry(order, seq++));
    return trail.length;
  };
}

module.exports = { makeAuditor };
