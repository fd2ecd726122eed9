// Receipts: strings made from a cart.
import type { Cart } from './cart';

export function formatPrice(cents: number): string {
  const whole = Math.floor(cents / 100);
  const rest = String(cents % 100).padStart(2, '0');
  return `${whole}.${rest} EUR`;
}

export function renderReceipt(cart: Cart): string[] {
  const lines: string[] = [];
  for (const item of cart.items) {
    lines.push(`${item.note.padEnd(32)} ${formatPrice(item.product.cents * item.qty)}`);
  }
  return lines;
}
